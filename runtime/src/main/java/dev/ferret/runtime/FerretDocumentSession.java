package dev.ferret.runtime;

import dev.ferret.DocumentSession;
import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.EventOperations;
import dev.ferret.IdLimits;
import dev.ferret.StreamArchived;
import dev.ferret.StreamForWriting;
import dev.ferret.StreamState;
import dev.ferret.StreamUnarchived;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.events.StreamAppends;
import dev.ferret.runtime.events.StreamArchives;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.projections.StreamAggregates;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A unit of work. Buffers are kept in call order and written by {@link #saveChanges()} in one transaction; after a
 * failed save they are kept, so the caller may inspect or discard the session.
 */
final class FerretDocumentSession extends FerretQuerySession implements DocumentSession, EventOperations {

    private static final long ANY_VERSION = StreamAppends.ANY_VERSION;

    private final StreamAppends appends;
    private final StreamArchives archives;
    private final StreamCompactions compactions;
    private final DocumentChanges documentChanges = new DocumentChanges();
    /** What the store's metadata source said as the session opened. */
    private final EventMetadata defaults;
    /** What an append without metadata of its own gets. */
    private EventMetadata metadata;

    FerretDocumentSession(FerretDocumentStore store, String tenantId, EventMetadata defaults) {
        // a unit of work reads what it writes: the primary
        super(store, tenantId, false);
        this.defaults = defaults;
        this.metadata = defaults;
        this.appends = new StreamAppends(context.dialect(), context.eventSql(), context.names(), context.eventTypes(),
                context.serializer(), context.dataSourceOf(tenantId), tenantId, context.partitionedByTenant());
        this.archives = new StreamArchives(store.archiveSql(), tenantId, context.eventTypes());
        this.compactions = new StreamCompactions(context, store.archiveSql(), tenantId);
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
            public void archiveStream(String streamId) {
                move(streamId, true, own.over(metadata));
            }

            @Override
            public void unarchiveStream(String streamId) {
                move(streamId, false, own.over(metadata));
            }

            @Override
            public void compactStream(Class<?> aggregateType, String streamId, long throughVersion,
                                      boolean keepReplaced) {
                FerretDocumentSession.this.compactStream(aggregateType, streamId, throughVersion, keepReplaced);
            }

            @Override
            public EventOperations withMetadata(EventMetadata more) {
                return FerretDocumentSession.this.withMetadata(Objects.requireNonNull(more, "metadata").over(own));
            }
        };
    }

    @Override
    public void archiveStream(String streamId) {
        move(streamId, true, metadata);
    }

    @Override
    public void unarchiveStream(String streamId) {
        move(streamId, false, metadata);
    }

    @Override
    public void compactStream(Class<?> aggregateType, String streamId, long throughVersion, boolean keepReplaced) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        Objects.requireNonNull(aggregateType, "aggregateType");
        compactions.add(store.streamAggregates().of(aggregateType).snapshot(), streamId, throughVersion,
                keepReplaced);
    }

    /** Buffers the move and its marker event, which is appended after every move of the save. */
    private void move(String streamId, boolean archive, EventMetadata metadata) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        archives.add(streamId, archive);
        Object marker = archive ? new StreamArchived(streamId) : new StreamUnarchived(streamId);
        appends.add(streamId, ANY_VERSION, null, false, List.of(marker), metadata);
    }

    private void buffer(String streamId, long expectedVersion, String aggregateType, boolean start,
                        List<?> events, EventMetadata metadata) {
        ensureOpen();
        appends.add(streamId, expectedVersion, aggregateType, start, events, metadata);
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
                Optional.ofNullable(StreamAggregates.foldAll(definition.snapshot(), streamId, events,
                        context.serializer())));
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
        if (appends.isEmpty() && documentChanges.isEmpty() && archives.isEmpty() && compactions.isEmpty()) {
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
        archives.clear();
        compactions.clear();
        documentChanges.clear();
    }

    /**
     * Writes the buffered appends and documents on {@code c}, inside a transaction the caller owns. What withdraws
     * the ownership of the sequence numbers drawn (where the engine does not end it with the transaction) is added to
     * {@code releaseOwnership}, for the caller to run once that transaction has ended.
     */
    private void writeChanges(Connection c, OffsetDateTime now, List<Runnable> releaseOwnership) throws SQLException {
        List<EventEnvelope> inlineEvents = store.inlineAppliers().isEmpty() ? null : new ArrayList<>();
        // first: the marker events the appends carry stay live
        archives.write(c);
        compactions.write(c);
        appends.write(c, now, releaseOwnership, inlineEvents);
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
        archives.clear();
        compactions.clear();
        documentChanges.clear();
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
}
