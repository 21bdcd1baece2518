package dev.ferret.runtime;

import dev.ferret.DatabaseException;
import dev.ferret.DocumentQuery;
import dev.ferret.EventEnvelope;
import dev.ferret.IdLimits;
import dev.ferret.QuerySession;
import dev.ferret.StreamState;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.projections.StreamAggregates;
import dev.ferret.projections.Snapshot;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * Reads for one tenant. Each read borrows a connection for its own duration only, from the tenant's database or,
 * for a session that may, from its replica as {@link ReplicaReads} decides.
 */
class FerretQuerySession implements QuerySession {

    final FerretDocumentStore store;
    final StoreContext context;
    final String tenantId;
    /** Whether reads may go to a replica; never for a unit of work or the daemon. */
    private final boolean mayReadReplica;
    private boolean closed;

    FerretQuerySession(FerretDocumentStore store, String tenantId, boolean mayReadReplica) {
        this.store = store;
        this.context = store.context();
        this.tenantId = tenantId;
        this.mayReadReplica = mayReadReplica;
    }

    /** Where a read that asked for nothing more goes. */
    DataSource readSource() {
        return readSource(ReplicaReads.NOTHING_AWAITED);
    }

    /** Where a read goes that must see the primary's position {@code awaited} (see {@link #awaitedNow}). */
    DataSource readSource(long awaited) {
        return mayReadReplica ? store.replicaReads().forRead(context.databases().of(tenantId), awaited)
                : context.dataSourceOf(tenantId);
    }

    /** What a read must see after a non-stale wait that has just ended; nothing when it reads the primary anyway. */
    long awaitedNow() {
        return mayReadReplica ? store.replicaReads().awaitedNow(context.databases().of(tenantId))
                : ReplicaReads.NOTHING_AWAITED;
    }

    @Override
    public String tenantId() {
        return tenantId;
    }

    @Override
    public <T> Optional<T> load(Class<T> type, Object id) {
        ensureOpen();
        return loadFrom(mappingForRead(type), id);
    }

    /** The document of {@code mapping} (a type, or one version of a projection's type) with {@code id}. */
    <T> Optional<T> loadFrom(DocumentMapping<T> mapping, Object id) {
        Class<T> type = mapping.type();
        String key = mapping.idFrom(id);
        try (Connection c = readSource().getConnection();
             PreparedStatement ps = c.prepareStatement(mapping.sql().load())) {
            ps.setString(1, tenantId);
            ps.setString(2, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(context.serializer().fromJson(rs.getString(1), type)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw failure("loading " + type.getSimpleName() + " " + key, e);
        }
    }

    @Override
    public <T> List<T> loadMany(Class<T> type, Collection<?> ids) {
        ensureOpen();
        Objects.requireNonNull(ids, "ids");
        DocumentMapping<T> mapping = mappingForRead(type);
        if (ids.isEmpty()) {
            return List.of();
        }
        // each document once, however often its id is asked for: the read-back joins on the ids it is given
        Set<String> unique = new LinkedHashSet<>();
        ids.forEach(id -> unique.add(mapping.idFrom(id)));
        List<String> keys = new ArrayList<>(unique);
        try (Connection c = readSource().getConnection();
             PreparedStatement ps = c.prepareStatement(mapping.sql().loadMany())) {
            List<T> documents = new ArrayList<>();
            for (int from = 0; from < keys.size(); from += DocumentChanges.MAX_ARRAY_PARAMETER) {
                ps.setString(1, tenantId);
                context.dialect().bindIds(c, ps, 2,
                        keys.subList(from, Math.min(keys.size(), from + DocumentChanges.MAX_ARRAY_PARAMETER)));
                documents.addAll(readDocuments(ps, type));
            }
            return documents;
        } catch (SQLException e) {
            throw failure("loading " + keys.size() + " " + type.getSimpleName() + " documents", e);
        }
    }

    @Override
    public <T> DocumentQuery<T> query(Class<T> type) {
        ensureOpen();
        return new FerretDocumentQuery<>(this, mappingForRead(type));
    }

    /**
     * The table reads of {@code type} go to: a query session reads a projection version's table once it caught up
     * and the prior version's until then ({@link VersionReads}); a unit of work reads what it writes.
     */
    private <T> DocumentMapping<T> mappingForRead(Class<T> type) {
        return mayReadReplica ? store.versionReads().forRead(type, tenantId) : context.mapping(type);
    }

    <T> List<T> readDocuments(PreparedStatement ps, Class<T> type) throws SQLException {
        List<T> documents = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                documents.add(context.serializer().fromJson(rs.getString(1), type));
            }
        }
        return documents;
    }

    @Override
    public List<EventEnvelope> fetchStream(String streamId) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        return readEvents(context.eventSql().selectStreamEvents(), streamId, "fetching stream " + streamId);
    }

    @Override
    public List<EventEnvelope> fetchStream(String streamId, boolean includeArchived) {
        if (!includeArchived) {
            return fetchStream(streamId);
        }
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        String sql = store.archiveSql().selectStreamWithArchived();
        try (Connection c = readSource().getConnection();
             PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, tenantId);
            ps.setString(2, streamId);
            ps.setString(3, tenantId);
            ps.setString(4, streamId);
            return readEvents(ps);
        } catch (SQLException e) {
            throw failure("fetching stream " + streamId + " with its archived events", e);
        }
    }

    @Override
    public List<EventEnvelope> fetchByCorrelationId(String correlationId) {
        ensureOpen();
        IdLimits.requireCorrelationId(correlationId);
        return readEvents(context.eventSql().selectCorrelatedEvents(), correlationId,
                "fetching the events of correlation id " + correlationId);
    }

    /** The events {@code sql} selects for this session's tenant and {@code key}, in its order. */
    private List<EventEnvelope> readEvents(String sql, String key, String what) {
        try (Connection c = readSource().getConnection();
             PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, tenantId);
            ps.setString(2, key);
            return readEvents(ps);
        } catch (SQLException e) {
            throw failure(what, e);
        }
    }

    private List<EventEnvelope> readEvents(PreparedStatement ps) throws SQLException {
        List<EventEnvelope> events = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                events.add(readEvent(rs));
            }
        }
        return events;
    }

    private EventEnvelope readEvent(ResultSet rs) throws SQLException {
        return context.readEvent(rs);
    }

    @Override
    public <T> Optional<T> aggregateStream(Class<T> type, String streamId) {
        return aggregate(type, streamId, event -> true);
    }

    @Override
    public <T> Optional<T> aggregateStream(Class<T> type, String streamId, long version) {
        return aggregate(type, streamId, event -> event.version() <= version);
    }

    @Override
    public <T> Optional<T> aggregateStream(Class<T> type, String streamId, Instant asOf) {
        Objects.requireNonNull(asOf, "asOf");
        return aggregate(type, streamId, event -> !event.timestamp().toInstant().isAfter(asOf));
    }

    private <T> Optional<T> aggregate(Class<T> type, String streamId, Predicate<EventEnvelope> upTo) {
        Snapshot<T> snapshot = store.streamAggregates().of(type).snapshot();
        List<EventEnvelope> events = fetchStream(streamId);
        List<EventEnvelope> folded = events.stream().takeWhile(upTo).toList();
        return Optional.ofNullable(StreamAggregates.foldAll(snapshot, streamId, folded, context.serializer()));
    }

    @Override
    public Optional<StreamState> fetchStreamState(String streamId) {
        ensureOpen();
        IdLimits.requireStreamId(streamId);
        try (Connection c = readSource().getConnection();
             PreparedStatement ps = c.prepareStatement(context.eventSql().selectStream())) {
            ps.setString(1, tenantId);
            ps.setString(2, streamId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new StreamState(streamId, rs.getLong(1), rs.getString(2),
                        rs.getObject(3, OffsetDateTime.class), tenantId, rs.getBoolean(4)));
            }
        } catch (SQLException e) {
            throw failure("fetching the state of stream " + streamId, e);
        }
    }

    DatabaseException failure(String doing, SQLException e) {
        return new DatabaseException(doing + " failed on " + store.engine() + " (SQLState " + e.getSQLState()
                + ", code " + e.getErrorCode() + "): " + e.getMessage(), e, context.dialect().isTransientCause(e));
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("session is closed");
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
