package dev.ferret.runtime.events;

import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.IdLimits;
import dev.ferret.JsonSerializer;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentChanges;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The appends of one unit of work of one tenant, buffered in call order and written into a transaction the caller
 * owns: the tenant's numbers first (partitioned stores), then the stream heads, then the events in one batch. Not
 * thread-safe: owned by the session that buffers them, as the session itself is.
 */
public final class StreamAppends {

    /** Expected version meaning "whatever the stream is at". */
    public static final long ANY_VERSION = StreamAppend.ANY_VERSION;

    private final Dialect dialect;
    private final EventSql sql;
    private final TableNames names;
    private final EventTypes types;
    private final JsonSerializer serializer;
    /** The tenant's database, asked apart from the transaction only to name a conflicting stream. */
    private final DataSource dataSource;
    private final String tenantId;
    private final boolean partitioned;
    private final List<StreamAppend> appends = new ArrayList<>();

    public StreamAppends(Dialect dialect, EventSql sql, TableNames names, EventTypes types, JsonSerializer serializer,
                         DataSource dataSource, String tenantId, boolean partitioned) {
        this.dialect = dialect;
        this.sql = sql;
        this.names = names;
        this.types = types;
        this.serializer = serializer;
        this.dataSource = dataSource;
        this.tenantId = tenantId;
        this.partitioned = partitioned;
    }

    /**
     * Buffers an append, refusing at the call what a save would refuse later: a bad stream id, no events, a null
     * event, an event type that cannot be named.
     *
     * @param expectedVersion {@link #ANY_VERSION}, 0 for a new stream, or the version the stream must be at
     * @param aggregateType   the aggregate's simple name for a started stream, else null
     */
    public void add(String streamId, long expectedVersion, String aggregateType, boolean start, List<?> events,
                    EventMetadata metadata) {
        IdLimits.requireStreamId(streamId);
        if (events == null || events.isEmpty()) {
            throw new IllegalArgumentException("events appended to stream '" + streamId
                    + "' must not be null or empty");
        }
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) == null) {
                throw new IllegalArgumentException("event " + i + " appended to stream '" + streamId + "' is null");
            }
            types.aliasOf(events.get(i).getClass());
        }
        appends.add(new StreamAppend(streamId, expectedVersion, aggregateType, start, List.copyOf(events), metadata));
    }

    public boolean isEmpty() {
        return appends.isEmpty();
    }

    public void clear() {
        appends.clear();
    }

    /**
     * Writes every buffered append on {@code c}, inside a transaction the caller owns. What withdraws the ownership
     * of the sequence numbers drawn (where the engine does not end it with the transaction) is added to
     * {@code releaseOwnership}, for the caller to run once that transaction has ended.
     *
     * @param envelopes where each appended event's envelope goes, with the sequence number its insert drew; null
     *                  when nobody needs them (no inline projection), which saves reading them back
     */
    public void write(Connection c, OffsetDateTime now, List<Runnable> releaseOwnership, List<EventEnvelope> envelopes)
            throws SQLException {
        if (appends.isEmpty()) {
            return;
        }
        // first, so every append of the tenant takes its sequence row before any stream row: one lock order
        long tenantSeq = partitioned ? drawTenantNumbers(c, now) : 0;
        List<AppendedRange> ranges = new StreamHeads(dialect, sql, dataSource, tenantId).write(c, appends, now);
        List<UUID> eventIds = writeEvents(c, ranges, now, tenantSeq);
        if (!partitioned) {
            // at once after the insert drew the numbers: the detector passes a hole without an owner.
            // Partitioned stores read each tenant's gap-free numbers instead, with no detector
            releaseOwnership.add(dialect.ownAppendedSequences(c, names, sql, tenantId, ranges));
        }
        if (envelopes != null) {
            addEnvelopes(c, ranges, eventIds, now, envelopes);
        }
    }

    /**
     * The event's JSON, which must be an object or an array: SQL Server's {@code ISJSON} check (before 2022) refuses a
     * top-level scalar that PostgreSQL and H2 would take, and an event must be storable on every engine alike.
     */
    private String structuredJson(Object event) {
        String json = serializer.toJson(event);
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (!Character.isWhitespace(c)) {
                if (c == '{' || c == '[') {
                    return json;
                }
                break;
            }
        }
        throw new IllegalArgumentException("event type " + event.getClass().getName() + " serializes to a JSON scalar ("
                + (json.length() > 40 ? json.substring(0, 40) + "..." : json) + "); events must serialize to a JSON"
                + " object or array on every engine: wrap the value in a record");
    }

    /**
     * Draws this save's numbers of the tenant's event sequence and returns the one before the first. The row stays
     * locked until the transaction ends, so the tenant's numbers commit in order and a rollback returns them.
     */
    private long drawTenantNumbers(Connection c, OffsetDateTime now) throws SQLException {
        int count = 0;
        for (StreamAppend append : appends) {
            count += append.events().size();
        }
        // another append of the tenant holds the row until it ends: wait for it, within events().appendLockTimeout
        Dialect.Restore restore = dialect.waitForTenantSequence(c);
        long drawn;
        try {
            drawn = mergeTenantRow(c, count, now);
        } catch (SQLException | RuntimeException e) {
            try {
                restore.restore();
            } catch (SQLException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        restore.restore();
        return drawn;
    }

    /** One MERGE of the tenant's row, tried again once when two first appends raced to insert it. */
    private long mergeTenantRow(Connection c, int count, OffsetDateTime now) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try (PreparedStatement ps = c.prepareStatement(sql.nextTenantSequence())) {
                ps.setString(1, tenantId);
                ps.setLong(2, count);
                ps.setObject(3, now);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1) - count;
                }
            } catch (SQLException e) {
                // H2's MERGE lets two first appends of a tenant both try the insert; the loser finds the row on a
                // second try (only the statement failed; PostgreSQL's ON CONFLICT never gets here)
                if (attempt > 1 || !dialect.isUniqueViolation(e)) {
                    throw e;
                }
            }
        }
    }

    /**
     * Writes the events of every append, in call order, as one JDBC batch, and returns their ids in that order.
     * {@code tenantSeq} is the tenant sequence number before the first (unused when not partitioned).
     */
    private List<UUID> writeEvents(Connection c, List<AppendedRange> ranges, OffsetDateTime now, long tenantSeq)
            throws SQLException {
        try {
            return sql.insertEventsOfMany().isEmpty() || eventCount() == 1
                    ? insertBatch(c, ranges, now, tenantSeq)
                    : insertArrays(c, ranges, now, tenantSeq);
        } catch (SQLException e) {
            if (dialect.isUniqueViolation(e)) {
                // the stream rows above serialize writers per stream, so this is a writer that bypassed them
                throw StreamHeads.conflict(c, sql, tenantId, appends.get(0), appends.size() == 1
                        ? "another writer appended the same versions"
                        : "another writer appended the same versions to one of this unit of work's "
                                + appends.size() + " streams");
            }
            throw e;
        }
    }

    private int eventCount() {
        int count = 0;
        for (StreamAppend append : appends) {
            count += append.events().size();
        }
        return count;
    }

    /** One statement per {@link DocumentChanges#MAX_ARRAY_PARAMETER} events, their columns bound as arrays. */
    private List<UUID> insertArrays(Connection c, List<AppendedRange> ranges, OffsetDateTime now, long tenantSeq)
            throws SQLException {
        EventColumns columns = new EventColumns(eventCount());
        for (int a = 0; a < appends.size(); a++) {
            StreamAppend append = appends.get(a);
            long version = ranges.get(a).firstVersion();
            EventMetadata meta = append.metadata();
            String headers = EventRows.headersJson(meta.headers());
            for (Object event : append.events()) {
                columns.add(UUID.randomUUID(), append.streamId(), version++, types.aliasOf(event.getClass()),
                        structuredJson(event), partitioned ? ++tenantSeq : null, meta.correlationId(),
                        meta.causationId(), headers);
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.insertEventsOfMany())) {
            for (int from = 0; from < columns.size(); from += DocumentChanges.MAX_ARRAY_PARAMETER) {
                int to = Math.min(columns.size(), from + DocumentChanges.MAX_ARRAY_PARAMETER);
                ps.setObject(1, now);
                ps.setString(2, tenantId);
                columns.bind(c, dialect, ps, 3, from, to);
                ps.executeUpdate();
            }
        }
        return columns.ids();
    }

    private List<UUID> insertBatch(Connection c, List<AppendedRange> ranges, OffsetDateTime now, long tenantSeq)
            throws SQLException {
        List<UUID> eventIds = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.insertEvent())) {
            for (int a = 0; a < appends.size(); a++) {
                StreamAppend append = appends.get(a);
                long version = ranges.get(a).firstVersion();
                for (Object event : append.events()) {
                    UUID eventId = UUID.randomUUID();
                    eventIds.add(eventId);
                    dialect.bindUuid(ps, 1, eventId);
                    ps.setString(2, append.streamId());
                    ps.setLong(3, version++);
                    ps.setString(4, types.aliasOf(event.getClass()));
                    ps.setString(5, structuredJson(event));
                    ps.setObject(6, now);
                    ps.setString(7, tenantId);
                    if (partitioned) {
                        ps.setLong(8, ++tenantSeq);
                    } else {
                        ps.setNull(8, Types.BIGINT);
                    }
                    EventMetadata meta = append.metadata();
                    ps.setString(9, meta.correlationId());
                    ps.setString(10, meta.causationId());
                    ps.setString(11, EventRows.headersJson(meta.headers()));
                    ps.addBatch();
                }
            }
            ps.executeBatch();
        }
        return eventIds;
    }

    /**
     * Adds each appended event's envelope to {@code inline}, carrying the sequence number its insert drew: read back
     * in this transaction, for every append in one statement where the engine takes arrays.
     */
    private void addEnvelopes(Connection c, List<AppendedRange> ranges, List<UUID> eventIds, OffsetDateTime now,
                              List<EventEnvelope> inline) throws SQLException {
        Map<StreamVersion, Long> sequences = appendedSequences(c, ranges);
        int event = 0;
        for (int a = 0; a < appends.size(); a++) {
            StreamAppend append = appends.get(a);
            long version = ranges.get(a).firstVersion();
            for (Object payload : append.events()) {
                inline.add(new EventEnvelope(sequences.get(new StreamVersion(append.streamId(), version)),
                        eventIds.get(event++), append.streamId(), version++,
                        types.aliasOf(payload.getClass()), now, tenantId, payload,
                        append.metadata()));
            }
        }
    }

    /** One event row of a stream, as the unique key (with the tenant) names it. */
    private record StreamVersion(String streamId, long version) {
    }

    /**
     * The sequence numbers the inserts drew, by stream and version. Read in the append's own transaction: the ranges'
     * versions are the rows it just wrote.
     */
    private Map<StreamVersion, Long> appendedSequences(Connection c, List<AppendedRange> ranges) throws SQLException {
        Map<StreamVersion, Long> drawn = new HashMap<>();
        if (!sql.selectAppendedSequencesOfMany().isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(sql.selectAppendedSequencesOfMany())) {
                ps.setString(dialect.bindAppendedRanges(c, ps, 1, ranges), tenantId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        drawn.put(new StreamVersion(rs.getString(1), rs.getLong(2)), rs.getLong(3));
                    }
                }
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql.selectAppendedSequences())) {
                for (AppendedRange range : ranges) {
                    ps.setString(1, tenantId);
                    ps.setString(2, range.streamId());
                    ps.setLong(3, range.firstVersion());
                    ps.setLong(4, range.lastVersion());
                    long version = range.firstVersion();
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            drawn.put(new StreamVersion(range.streamId(), version++), rs.getLong(1));
                        }
                    }
                }
            }
        }
        int expected = appends.stream().mapToInt(append -> append.events().size()).sum();
        if (drawn.size() != expected) {
            throw new IllegalStateException("read back " + drawn.size() + " of the " + expected + " events just"
                    + " appended by a unit of work of tenant '" + tenantId + "'");
        }
        return drawn;
    }

}
