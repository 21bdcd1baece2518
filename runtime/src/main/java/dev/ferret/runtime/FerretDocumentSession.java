package dev.ferret.runtime;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.EventOperations;
import dev.ferret.IdLimits;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.EventEnvelope;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A unit of work. Buffers are kept in call order and written by {@link #saveChanges()} in one transaction; after a
 * failed save they are kept, so the caller may inspect or discard the session.
 */
final class FerretDocumentSession extends FerretQuerySession implements DocumentSession, EventOperations {

    /** Expected version meaning "whatever the stream is at". */
    private static final long ANY_VERSION = -1;

    private final List<StreamAppend> appends = new ArrayList<>();
    private final DocumentChanges documentChanges = new DocumentChanges();

    private record StreamAppend(String streamId, long expectedVersion, String aggregateType, boolean start,
                                List<?> events) {
    }


    FerretDocumentSession(FerretDocumentStore store, String tenantId) {
        super(store, tenantId);
    }

    @Override
    public void store(Object... documents) {
        ensureOpen();
        if (documents == null || documents.length == 0) {
            throw new IllegalArgumentException("store() needs at least one document");
        }
        // every document checked before any is buffered, so a refused call leaves the unit of work as it was
        List<DocumentChanges.Key> keys = new ArrayList<>(documents.length);
        for (Object document : documents) {
            if (document == null) {
                throw new IllegalArgumentException("cannot store a null document");
            }
            DocumentMapping<?> mapping = context.mapping(document.getClass());
            keys.add(new DocumentChanges.Key(mapping, tenantId, mapping.idOf(document)));
        }
        for (int i = 0; i < documents.length; i++) {
            documentChanges.store(keys.get(i), documents[i]);
        }
    }

    @Override
    public void delete(Class<?> type, Object id) {
        ensureOpen();
        DocumentMapping<?> mapping = context.mapping(type);
        documentChanges.delete(new DocumentChanges.Key(mapping, tenantId, mapping.idFrom(id)));
    }

    @Override
    public EventOperations events() {
        return this;
    }

    @Override
    public void append(String streamId, List<?> events) {
        buffer(streamId, ANY_VERSION, null, false, events);
    }

    @Override
    public void append(String streamId, long expectedVersion, List<?> events) {
        IdLimits.requireStreamId(streamId);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expected version of stream '" + streamId
                    + "' must be 0 (new stream) or more, was " + expectedVersion);
        }
        buffer(streamId, expectedVersion, null, false, events);
    }

    @Override
    public void startStream(String streamId, Class<?> aggregateType, List<?> events) {
        Objects.requireNonNull(aggregateType, "aggregateType");
        buffer(streamId, 0, aggregateType.getSimpleName(), true, events);
    }

    private void buffer(String streamId, long expectedVersion, String aggregateType, boolean start,
                        List<?> events) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        if (events == null || events.isEmpty()) {
            throw new IllegalArgumentException("events appended to stream '" + streamId
                    + "' must not be null or empty");
        }
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) == null) {
                throw new IllegalArgumentException("event " + i + " appended to stream '" + streamId + "' is null");
            }
            // fail at the call, not at save, when the type cannot be named
            context.eventTypes().aliasOf(events.get(i).getClass());
        }
        appends.add(new StreamAppend(streamId, expectedVersion, aggregateType, start, List.copyOf(events)));
    }

    @Override
    public void saveChanges() {
        ensureOpen();
        if (appends.isEmpty() && documentChanges.isEmpty()) {
            return;
        }
        OffsetDateTime now = OffsetDateTime.now(context.clock());
        // what withdraws the ownership of the numbers drawn where the engine does not end it with the transaction;
        // run only once the transaction has ended, so a hole stays owned until it is filled or permanent
        List<Runnable> releaseOwnership = new ArrayList<>();
        try {
            context.transactions().inTransaction(context.dataSourceOf(tenantId), c -> {
                writeChanges(c, now, releaseOwnership);
                return null;
            });
        } catch (SQLException e) {
            throw failure("saving changes", e);
        } finally {
            releaseOwnership.forEach(Runnable::run);
        }
        if (!appends.isEmpty()) {
            // new events are what the daemon is for: a loop lost to a suspended container comes back now
            store.asyncDaemon().heal();
        }
        appends.clear();
        documentChanges.clear();
    }

    /**
     * Writes the buffered appends and documents on {@code c}, inside a transaction the caller owns. What withdraws
     * the ownership of the sequence numbers drawn (where the engine does not end it with the transaction) is added to
     * {@code releaseOwnership}, for the caller to run once that transaction has ended.
     */
    private void writeChanges(Connection c, OffsetDateTime now, List<Runnable> releaseOwnership) throws SQLException {
        List<EventEnvelope> inlineEvents = store.inlineAppliers().isEmpty() ? null : new ArrayList<>();
        // first, so every append of the tenant takes its sequence row before any stream row: one lock order
        long[] tenantSeq = {context.partitionedByTenant() && !appends.isEmpty() ? drawTenantNumbers(c, now) : 0};
        for (StreamAppend append : appends) {
            long headVersion = writeStream(c, append, now);
            tenantSeq[0] = writeEvents(c, append, headVersion, now, inlineEvents, tenantSeq[0]);
            if (!context.partitionedByTenant()) {
                // at once after the insert drew the numbers: the detector passes a hole without an owner.
                // Partitioned stores read each tenant's gap-free numbers instead, with no detector
                releaseOwnership.add(context.dialect().ownAppendedSequences(c, context.names(), context.eventSql(),
                        tenantId, append.streamId(), headVersion - append.events().size() + 1, headVersion));
            }
        }
        if (inlineEvents != null && !inlineEvents.isEmpty()) {
            applyInline(c, inlineEvents);
        }
        documentChanges.write(c, context.dialect(), context.serializer(), now);
    }

    /**
     * Writes this unit of work into a transaction someone else owns (a daemon page appending the events its
     * projections raised), on that transaction's connection, by the same path as {@link #saveChanges()}. What
     * withdraws the ownership of the numbers drawn is added to {@code afterTransaction}, to run once that transaction
     * has ended, committed or not.
     */
    void writeWithin(Connection c, OffsetDateTime now, List<Runnable> afterTransaction) throws SQLException {
        ensureOpen();
        writeChanges(c, now, afterTransaction);
        // the owner commits or rolls back; either way this unit of work is spent
        appends.clear();
        documentChanges.clear();
    }

    /**
     * The event's JSON, which must be an object or an array: SQL Server's {@code ISJSON} check (before 2022) refuses a
     * top-level scalar that PostgreSQL and H2 would take, and an event must be storable on every engine alike.
     */
    private String structuredJson(Object event) {
        String json = context.serializer().toJson(event);
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

    /** Moves the stream's head and returns its version afterwards. */
    private long writeStream(Connection c, StreamAppend append, OffsetDateTime now) throws SQLException {
        EventSql sql = context.eventSql();
        int count = append.events().size();
        long newVersion;
        if (append.expectedVersion() == 0) {
            try (PreparedStatement ps = c.prepareStatement(sql.insertStream())) {
                bindStreamRow(ps, append, count, now);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (context.dialect().isUniqueViolation(e)) {
                    throw conflict(c, append, "it already exists");
                }
                throw e;
            }
            newVersion = count;
        } else if (append.expectedVersion() > 0) {
            newVersion = append.expectedVersion() + count;
            try (PreparedStatement ps = c.prepareStatement(sql.advanceStream())) {
                ps.setLong(1, newVersion);
                ps.setObject(2, now);
                ps.setString(3, tenantId);
                ps.setString(4, append.streamId());
                ps.setLong(5, append.expectedVersion());
                if (ps.executeUpdate() != 1) {
                    throw conflict(c, append, "another writer moved it first or it does not exist");
                }
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql.upsertStream())) {
                bindStreamRow(ps, append, count, now);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    newVersion = rs.getLong(1);
                }
            } catch (SQLException e) {
                if (context.dialect().isUniqueViolation(e)) {
                    // two writers created the stream at once; the engine's upsert let both try the insert
                    throw conflict(c, append, "another writer created it at the same time");
                }
                throw e;
            }
        }
        return newVersion;
    }

    /** (id, tenant_id, type, version or count, timestamp, created) of a stream row. */
    private void bindStreamRow(PreparedStatement ps, StreamAppend append, int count, OffsetDateTime now)
            throws SQLException {
        ps.setString(1, append.streamId());
        ps.setString(2, tenantId);
        ps.setString(3, append.aggregateType());
        ps.setLong(4, count);
        ps.setObject(5, now);
        ps.setObject(6, now);
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
        Dialect.Restore restore = context.dialect().waitForTenantSequence(c);
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
            try (PreparedStatement ps = c.prepareStatement(context.eventSql().nextTenantSequence())) {
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
                if (attempt > 1 || !context.dialect().isUniqueViolation(e)) {
                    throw e;
                }
            }
        }
    }

    /**
     * Writes the events and returns the last tenant sequence number used (0 when not partitioned). With
     * {@code inline} given, adds each event's envelope to it, carrying the sequence number its insert drew.
     */
    private long writeEvents(Connection c, StreamAppend append, long headVersion, OffsetDateTime now,
                             List<EventEnvelope> inline, long tenantSeq) throws SQLException {
        boolean partitioned = context.partitionedByTenant();
        int count = append.events().size();
        long firstVersion = headVersion - count + 1;
        List<UUID> eventIds = new ArrayList<>(count);
        List<String> aliases = new ArrayList<>(count);
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().insertEvent())) {
            long version = firstVersion;
            for (Object event : append.events()) {
                UUID eventId = UUID.randomUUID();
                String alias = context.eventTypes().aliasOf(event.getClass());
                eventIds.add(eventId);
                aliases.add(alias);
                context.dialect().bindUuid(ps, 1, eventId);
                ps.setString(2, append.streamId());
                ps.setLong(3, version++);
                ps.setString(4, alias);
                ps.setString(5, structuredJson(event));
                ps.setObject(6, now);
                ps.setString(7, tenantId);
                if (partitioned) {
                    ps.setLong(8, ++tenantSeq);
                } else {
                    ps.setNull(8, Types.BIGINT);
                }
                ps.addBatch();
            }
            ps.executeBatch();
        } catch (SQLException e) {
            if (context.dialect().isUniqueViolation(e)) {
                throw conflict(c, append, "another writer appended the same versions");
            }
            throw e;
        }
        if (inline != null) {
            long[] sequences = appendedSequences(c, append, firstVersion, headVersion);
            for (int i = 0; i < count; i++) {
                inline.add(new EventEnvelope(sequences[i], eventIds.get(i), append.streamId(), firstVersion + i,
                        aliases.get(i), now, tenantId, append.events().get(i)));
            }
        }
        return tenantSeq;
    }

    /**
     * The sequence numbers the inserts of {@code append} drew, in version order. Read in the append's own
     * transaction: the stream's versions from {@code firstVersion} to {@code lastVersion} are the rows it just wrote.
     */
    private long[] appendedSequences(Connection c, StreamAppend append, long firstVersion, long lastVersion)
            throws SQLException {
        long[] sequences = new long[append.events().size()];
        int found = 0;
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().selectAppendedSequences())) {
            ps.setString(1, tenantId);
            ps.setString(2, append.streamId());
            ps.setLong(3, firstVersion);
            ps.setLong(4, lastVersion);
            try (ResultSet rs = ps.executeQuery()) {
                while (found < sequences.length && rs.next()) {
                    sequences[found++] = rs.getLong(1);
                }
            }
        }
        if (found != sequences.length) {
            throw new IllegalStateException("read back " + found + " of the " + sequences.length + " events just"
                    + " appended to stream '" + append.streamId() + "' of tenant '" + tenantId + "' (versions "
                    + firstVersion + " to " + lastVersion + ")");
        }
        return sequences;
    }

    private void applyInline(Connection c, List<EventEnvelope> events) throws SQLException {
        PageBatch batch = new PageBatch(context, c, documentChanges, context.databases().of(tenantId));
        for (ProjectionApplier applier : store.inlineAppliers()) {
            List<EventEnvelope> wanted = events.stream().filter(e -> applier.wants(e.typeName())).toList();
            try {
                applier.apply(wanted, batch, (event, error) -> {
                    throw new ApplyFailedException(applier.name() + " (inline)", event.sequence(),
                            event.typeName(), event.streamId(), error);
                });
            } catch (PageBatch.PageReadException e) {
                throw e.getCause();
            }
        }
    }

    private ConcurrencyException conflict(Connection c, StreamAppend append, String reason) {
        long actual = -1;
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().selectStream())) {
            ps.setString(1, tenantId);
            ps.setString(2, append.streamId());
            try (ResultSet rs = ps.executeQuery()) {
                actual = rs.next() ? rs.getLong(1) : 0;
            }
        } catch (SQLException e) {
            // the conflict is the news; the actual version is a courtesy (PostgreSQL aborts the transaction)
        }
        String expected = append.expectedVersion() == ANY_VERSION ? "any version"
                : append.start() ? "a new stream" : "version " + append.expectedVersion();
        return new ConcurrencyException(append.streamId(), append.expectedVersion(), actual,
                "cannot append " + append.events().size() + " events to stream '" + append.streamId()
                        + "' of tenant '" + tenantId + "': expected " + expected
                        + (actual >= 0 ? ", found version " + actual : "") + " (" + reason + "); nothing was saved");
    }

}
