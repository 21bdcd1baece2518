package dev.ferret.runtime;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.EventOperations;
import dev.ferret.IdLimits;
import dev.ferret.StreamForWriting;
import dev.ferret.StreamState;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.events.EventRows;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.projections.StreamAggregates;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
    /** What the store's metadata source said as the session opened. */
    private final EventMetadata defaults;
    /** What an append without metadata of its own gets. */
    private EventMetadata metadata;

    private record StreamAppend(String streamId, long expectedVersion, String aggregateType, boolean start,
                                List<?> events, EventMetadata metadata) {
    }

    FerretDocumentSession(FerretDocumentStore store, String tenantId, EventMetadata defaults) {
        super(store, tenantId);
        this.defaults = defaults;
        this.metadata = defaults;
    }

    @Override
    public void metadata(EventMetadata metadata) {
        ensureOpen();
        this.metadata = Objects.requireNonNull(metadata, "metadata").over(defaults);
    }

    @Override
    public EventMetadata metadata() {
        return metadata;
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
        buffer(streamId, ANY_VERSION, null, false, events, metadata);
    }

    @Override
    public void append(String streamId, long expectedVersion, List<?> events) {
        appendExpecting(streamId, expectedVersion, events, metadata);
    }

    private void appendExpecting(String streamId, long expectedVersion, List<?> events, EventMetadata metadata) {
        IdLimits.requireStreamId(streamId);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expected version of stream '" + streamId
                    + "' must be 0 (new stream) or more, was " + expectedVersion);
        }
        buffer(streamId, expectedVersion, null, false, events, metadata);
    }

    @Override
    public void startStream(String streamId, Class<?> aggregateType, List<?> events) {
        startStream(streamId, aggregateType, events, metadata);
    }

    private void startStream(String streamId, Class<?> aggregateType, List<?> events, EventMetadata metadata) {
        Objects.requireNonNull(aggregateType, "aggregateType");
        buffer(streamId, 0, aggregateType.getSimpleName(), true, events, metadata);
    }

    @Override
    public EventOperations withMetadata(EventMetadata own) {
        Objects.requireNonNull(own, "metadata");
        return new EventOperations() {
            @Override
            public void append(String streamId, List<?> events) {
                buffer(streamId, ANY_VERSION, null, false, events, own.over(metadata));
            }

            @Override
            public void append(String streamId, long expectedVersion, List<?> events) {
                appendExpecting(streamId, expectedVersion, events, own.over(metadata));
            }

            @Override
            public void startStream(String streamId, Class<?> aggregateType, List<?> events) {
                FerretDocumentSession.this.startStream(streamId, aggregateType, events, own.over(metadata));
            }

            @Override
            public EventOperations withMetadata(EventMetadata more) {
                return FerretDocumentSession.this.withMetadata(Objects.requireNonNull(more, "metadata").over(own));
            }
        };
    }

    private void buffer(String streamId, long expectedVersion, String aggregateType, boolean start,
                        List<?> events, EventMetadata metadata) {
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
        appends.add(new StreamAppend(streamId, expectedVersion, aggregateType, start, List.copyOf(events), metadata));
    }

    @Override
    public <T> StreamForWriting<T> fetchForWriting(Class<T> type, String streamId) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        StreamAggregates.Definition<T> definition = store.streamAggregates().of(type);
        if (definition.inline()) {
            // the version first: the inline snapshot commits with every append, so it is at least that current, and
            // a newer one only makes the save refuse the stale version
            long version = fetchStreamState(streamId).map(StreamState::version).orElse(0L);
            DocumentMapping<T> mapping = context.mapping(type, definition.snapshot().version());
            return new Fetched<>(streamId, version, loadFrom(mapping, streamId));
        }
        Fetched<T> fromSnapshot = fromCurrentAsyncSnapshot(definition, streamId);
        if (fromSnapshot != null) {
            return fromSnapshot;
        }
        List<EventEnvelope> events = fetchStream(streamId);
        long version = events.isEmpty() ? 0 : events.get(events.size() - 1).version();
        return new Fetched<>(streamId, version,
                Optional.ofNullable(StreamAggregates.foldAll(definition.snapshot(), streamId, events)));
    }

    /**
     * The stream from its async snapshot when the snapshot's shard has passed the stream's last event, else null
     * (fold the events). The version is read first: a snapshot the daemon moved on since only makes the save refuse
     * the stale version, as another writer's append would.
     */
    private <T> Fetched<T> fromCurrentAsyncSnapshot(StreamAggregates.Definition<T> definition, String streamId) {
        long version = fetchStreamState(streamId).map(StreamState::version).orElse(0L);
        if (version == 0) {
            return null;
        }
        try {
            long lastEvent;
            try (Connection c = context.dataSourceOf(tenantId).getConnection();
                 PreparedStatement ps = c.prepareStatement(context.eventSql().selectEventNumbers())) {
                ps.setString(1, tenantId);
                ps.setString(2, streamId);
                ps.setLong(3, version);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return null;
                    }
                    // a tenant's shard counts the tenant's own sequence
                    lastEvent = rs.getLong(context.partitionedByTenant() ? 2 : 1);
                }
            }
            // the connection is back first: a pool of one still serves the progression read
            if (store.asyncDaemon().committedThrough(definition.shard(), tenantId) < lastEvent) {
                return null;
            }
        } catch (SQLException e) {
            throw failure("reading how far the snapshot of stream " + streamId + " is", e);
        }
        DocumentMapping<T> mapping = context.mapping(definition.snapshot().documentType(),
                definition.snapshot().version());
        return new Fetched<>(streamId, version, loadFrom(mapping, streamId));
    }

    /** A fetched stream; what it appends goes into this session at the version it was fetched at. */
    private final class Fetched<T> implements StreamForWriting<T> {
        private final String streamId;
        private final long version;
        private final Optional<T> aggregate;

        Fetched(String streamId, long version, Optional<T> aggregate) {
            this.streamId = streamId;
            this.version = version;
            this.aggregate = aggregate;
        }

        @Override
        public String streamId() {
            return streamId;
        }

        @Override
        public long version() {
            return version;
        }

        @Override
        public Optional<T> aggregate() {
            return aggregate;
        }

        @Override
        public void append(Object... events) {
            append(Arrays.asList(events));
        }

        @Override
        public void append(List<?> events) {
            FerretDocumentSession.this.append(streamId, version, events);
        }
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
        boolean appending = !appends.isEmpty();
        try {
            // a caller's JTA transaction is joined: the ownership then ends with it, at its commit or rollback, and
            // the daemon is told of the new events only then, never before they are visible
            context.transactions().inCallersTransaction(context.dataSourceOf(tenantId), c -> {
                writeChanges(c, now, releaseOwnership);
                return null;
            }, () -> {
                releaseOwnership.forEach(Runnable::run);
                if (appending) {
                    // new events are what the daemon is for: detected now, and a loop lost to a suspended
                    // container comes back
                    store.asyncDaemon().appended();
                }
            });
        } catch (SQLException e) {
            throw failure("saving changes", e);
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
        if (!appends.isEmpty()) {
            // first, so every append of the tenant takes its sequence row before any stream row: one lock order
            long tenantSeq = context.partitionedByTenant() ? drawTenantNumbers(c, now) : 0;
            List<AppendedRange> ranges = writeStreams(c, now);
            List<UUID> eventIds = writeEvents(c, ranges, now, tenantSeq);
            if (!context.partitionedByTenant()) {
                // at once after the insert drew the numbers: the detector passes a hole without an owner.
                // Partitioned stores read each tenant's gap-free numbers instead, with no detector
                releaseOwnership.add(context.dialect().ownAppendedSequences(c, context.names(), context.eventSql(),
                        tenantId, ranges));
            }
            if (inlineEvents != null) {
                addEnvelopes(c, ranges, eventIds, now, inlineEvents);
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

    /**
     * Moves the head of every appended stream and returns, per append in call order, the versions it writes. Where
     * the engine takes arrays and no stream is appended twice, in a constant number of statements: the appends to
     * any version in one multi-row upsert, new streams in one batch of inserts, expected versions in one batch of
     * conditional updates. Otherwise one statement per append, in call order.
     */
    private List<AppendedRange> writeStreams(Connection c, OffsetDateTime now) throws SQLException {
        List<AppendedRange> ranges = new ArrayList<>(appends.size());
        boolean distinct = appends.stream().map(StreamAppend::streamId).distinct().count() == appends.size();
        if (appends.size() == 1 || !distinct || context.eventSql().upsertStreamsOfMany().isEmpty()) {
            for (StreamAppend append : appends) {
                ranges.add(range(append, writeStream(c, append, now)));
            }
            return ranges;
        }
        Map<String, Long> heads = new HashMap<>();
        upsertAnyVersionStreams(c, now, heads);
        insertNewStreams(c, now, heads);
        advanceExpectedStreams(c, now, heads);
        for (StreamAppend append : appends) {
            ranges.add(range(append, heads.get(append.streamId())));
        }
        return ranges;
    }

    private static AppendedRange range(StreamAppend append, long headVersion) {
        return new AppendedRange(append.streamId(), headVersion - append.events().size() + 1, headVersion);
    }

    /** The appends to any version, in one upsert that returns each stream's new head. */
    private void upsertAnyVersionStreams(Connection c, OffsetDateTime now, Map<String, Long> heads)
            throws SQLException {
        List<StreamAppend> any = appends.stream().filter(a -> a.expectedVersion() == ANY_VERSION).toList();
        if (any.isEmpty()) {
            return;
        }
        Dialect dialect = context.dialect();
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().upsertStreamsOfMany())) {
            ps.setString(1, tenantId);
            ps.setObject(2, now);
            ps.setObject(3, now);
            dialect.bindArray(c, ps, 4, "varchar", any.stream().map(StreamAppend::streamId).toArray());
            dialect.bindArray(c, ps, 5, "varchar", any.stream().map(StreamAppend::aggregateType).toArray());
            dialect.bindArray(c, ps, 6, "bigint", any.stream().map(a -> (long) a.events().size()).toArray());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    heads.put(rs.getString(1), rs.getLong(2));
                }
            }
        } catch (SQLException e) {
            if (dialect.isUniqueViolation(e)) {
                // two writers created a stream at once; the engine's upsert let both try the insert
                throw conflict(c, any.get(0), "another writer created one of the unit of work's "
                        + any.size() + " new or appended streams at the same time");
            }
            throw e;
        }
    }

    /** New streams ({@code startStream}, expected version 0), in one batch of inserts. */
    private void insertNewStreams(Connection c, OffsetDateTime now, Map<String, Long> heads) throws SQLException {
        List<StreamAppend> created = appends.stream().filter(a -> a.expectedVersion() == 0).toList();
        if (created.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().insertStream())) {
            for (StreamAppend append : created) {
                bindStreamRow(ps, append, append.events().size(), now);
                ps.addBatch();
            }
            ps.executeBatch();
        } catch (SQLException e) {
            if (context.dialect().isUniqueViolation(e)) {
                throw conflict(c, firstExisting(created), "it already exists");
            }
            throw e;
        }
        created.forEach(append -> heads.put(append.streamId(), (long) append.events().size()));
    }

    /**
     * Which of {@code created} exists, asked on a connection of its own: the batch's transaction may be aborted
     * (PostgreSQL), and drivers disagree on which entries of a failed batch they report. The stream that made the
     * insert fail was committed by then (the engine waited for its writer), so it is seen; the first append when none
     * is.
     */
    private StreamAppend firstExisting(List<StreamAppend> created) {
        try (Connection lookup = context.dataSourceOf(tenantId).getConnection();
             PreparedStatement ps = lookup.prepareStatement(context.eventSql().selectStream())) {
            for (StreamAppend append : created) {
                ps.setString(1, tenantId);
                ps.setString(2, append.streamId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return append;
                    }
                }
            }
        } catch (SQLException e) {
            // naming the stream is a courtesy; the conflict is the news
        }
        return created.get(0);
    }

    /** Appends at an expected version, in one batch of updates that each move a stream only from that version. */
    private void advanceExpectedStreams(Connection c, OffsetDateTime now, Map<String, Long> heads)
            throws SQLException {
        List<StreamAppend> expected = appends.stream().filter(a -> a.expectedVersion() > 0).toList();
        if (expected.isEmpty()) {
            return;
        }
        int[] moved;
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().advanceStream())) {
            for (StreamAppend append : expected) {
                bindAdvance(ps, append, now);
                ps.addBatch();
            }
            moved = ps.executeBatch();
        }
        for (int i = 0; i < expected.size(); i++) {
            StreamAppend append = expected.get(i);
            if (moved[i] != 1) {
                throw conflict(c, append, "another writer moved it first or it does not exist");
            }
            heads.put(append.streamId(), append.expectedVersion() + append.events().size());
        }
    }

    private void bindAdvance(PreparedStatement ps, StreamAppend append, OffsetDateTime now) throws SQLException {
        ps.setLong(1, append.expectedVersion() + append.events().size());
        ps.setObject(2, now);
        ps.setString(3, tenantId);
        ps.setString(4, append.streamId());
        ps.setLong(5, append.expectedVersion());
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
                bindAdvance(ps, append, now);
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
     * Writes the events of every append, in call order, as one JDBC batch, and returns their ids in that order.
     * {@code tenantSeq} is the tenant sequence number before the first (unused when not partitioned).
     */
    private List<UUID> writeEvents(Connection c, List<AppendedRange> ranges, OffsetDateTime now, long tenantSeq)
            throws SQLException {
        boolean partitioned = context.partitionedByTenant();
        List<UUID> eventIds = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(context.eventSql().insertEvent())) {
            for (int a = 0; a < appends.size(); a++) {
                StreamAppend append = appends.get(a);
                long version = ranges.get(a).firstVersion();
                for (Object event : append.events()) {
                    UUID eventId = UUID.randomUUID();
                    eventIds.add(eventId);
                    context.dialect().bindUuid(ps, 1, eventId);
                    ps.setString(2, append.streamId());
                    ps.setLong(3, version++);
                    ps.setString(4, context.eventTypes().aliasOf(event.getClass()));
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
        } catch (SQLException e) {
            if (context.dialect().isUniqueViolation(e)) {
                // the stream rows above serialize writers per stream, so this is a writer that bypassed them
                throw conflict(c, appends.get(0), appends.size() == 1 ? "another writer appended the same versions"
                        : "another writer appended the same versions to one of this unit of work's "
                                + appends.size() + " streams");
            }
            throw e;
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
                        context.eventTypes().aliasOf(payload.getClass()), now, tenantId, payload,
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
        EventSql sql = context.eventSql();
        if (!sql.selectAppendedSequencesOfMany().isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(sql.selectAppendedSequencesOfMany())) {
                context.dialect().bindAppendedRanges(c, ps, 1, ranges);
                ps.setString(4, tenantId);
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
