package dev.ferret.runtime;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.EventOperations;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    /** Last operation per document; a document stored and deleted in one unit of work is written once. */
    private final Map<DocumentKey, Object> documentChanges = new LinkedHashMap<>();

    private record StreamAppend(String streamId, long expectedVersion, String aggregateType, boolean start,
                                List<?> events) {
    }

    private record DocumentKey(DocumentMapping<?> mapping, String id) {
    }

    /** Marks a deletion in {@link #documentChanges}. */
    private static final Object DELETED = new Object();

    FerretDocumentSession(FerretDocumentStore store, String tenantId) {
        super(store, tenantId);
    }

    @Override
    public void store(Object... documents) {
        ensureOpen();
        if (documents == null || documents.length == 0) {
            throw new IllegalArgumentException("store() needs at least one document");
        }
        for (Object document : documents) {
            if (document == null) {
                throw new IllegalArgumentException("cannot store a null document");
            }
            DocumentMapping<?> mapping = store.mapping(document.getClass());
            documentChanges.put(new DocumentKey(mapping, mapping.idOf(document)), document);
        }
    }

    @Override
    public void delete(Class<?> type, Object id) {
        ensureOpen();
        DocumentMapping<?> mapping = store.mapping(type);
        documentChanges.put(new DocumentKey(mapping, mapping.idFrom(id)), DELETED);
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
        requireStreamId(streamId);
        if (events == null || events.isEmpty()) {
            throw new IllegalArgumentException("events appended to stream '" + streamId
                    + "' must not be null or empty");
        }
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) == null) {
                throw new IllegalArgumentException("event " + i + " appended to stream '" + streamId + "' is null");
            }
            // fail at the call, not at save, when the type cannot be named
            store.eventTypes().aliasOf(events.get(i).getClass());
        }
        appends.add(new StreamAppend(streamId, expectedVersion, aggregateType, start, List.copyOf(events)));
    }

    @Override
    public void saveChanges() {
        ensureOpen();
        if (appends.isEmpty() && documentChanges.isEmpty()) {
            return;
        }
        OffsetDateTime now = OffsetDateTime.now(store.clock());
        try (Connection c = store.dataSource().getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                for (StreamAppend append : appends) {
                    writeAppend(c, append, now);
                }
                writeDocuments(c, now);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c, e);
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw failure("saving changes", e);
        }
        appends.clear();
        documentChanges.clear();
    }

    private void writeAppend(Connection c, StreamAppend append, OffsetDateTime now) throws SQLException {
        EventSql sql = store.eventSql();
        int count = append.events().size();
        long newVersion;
        if (append.expectedVersion() == 0) {
            try (PreparedStatement ps = c.prepareStatement(sql.insertStream())) {
                ps.setString(1, append.streamId());
                ps.setString(2, tenantId);
                ps.setString(3, append.aggregateType());
                ps.setLong(4, count);
                ps.setObject(5, now);
                ps.setObject(6, now);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (store.dialect().isUniqueViolation(e)) {
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
                ps.setString(1, append.streamId());
                ps.setString(2, tenantId);
                ps.setString(3, append.aggregateType());
                ps.setLong(4, count);
                ps.setObject(5, now);
                ps.setObject(6, now);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    newVersion = rs.getLong(1);
                }
            } catch (SQLException e) {
                if (store.dialect().isUniqueViolation(e)) {
                    // two writers created the stream at once; the engine's upsert let both try the insert
                    throw conflict(c, append, "another writer created it at the same time");
                }
                throw e;
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.insertEvent())) {
            long version = newVersion - count;
            for (Object event : append.events()) {
                store.dialect().bindUuid(ps, 1, UUID.randomUUID());
                ps.setString(2, append.streamId());
                ps.setLong(3, ++version);
                ps.setString(4, store.eventTypes().aliasOf(event.getClass()));
                ps.setString(5, store.serializer().toJson(event));
                ps.setObject(6, now);
                ps.setString(7, tenantId);
                ps.addBatch();
            }
            ps.executeBatch();
        } catch (SQLException e) {
            if (store.dialect().isUniqueViolation(e)) {
                throw conflict(c, append, "another writer appended the same versions");
            }
            throw e;
        }
    }

    private ConcurrencyException conflict(Connection c, StreamAppend append, String reason) {
        long actual = -1;
        try (PreparedStatement ps = c.prepareStatement(store.eventSql().selectStream())) {
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

    private void writeDocuments(Connection c, OffsetDateTime now) throws SQLException {
        Map<DocumentMapping<?>, List<Map.Entry<DocumentKey, Object>>> byMapping = new LinkedHashMap<>();
        for (Map.Entry<DocumentKey, Object> change : documentChanges.entrySet()) {
            byMapping.computeIfAbsent(change.getKey().mapping(), m -> new ArrayList<>()).add(change);
        }
        for (Map.Entry<DocumentMapping<?>, List<Map.Entry<DocumentKey, Object>>> group : byMapping.entrySet()) {
            DocumentMapping<?> mapping = group.getKey();
            try (PreparedStatement upsert = c.prepareStatement(mapping.sql().upsert());
                 PreparedStatement delete = c.prepareStatement(mapping.sql().delete())) {
                boolean upserts = false;
                boolean deletes = false;
                for (Map.Entry<DocumentKey, Object> change : group.getValue()) {
                    if (change.getValue() == DELETED) {
                        delete.setString(1, tenantId);
                        delete.setString(2, change.getKey().id());
                        delete.addBatch();
                        deletes = true;
                    } else {
                        upsert.setString(1, change.getKey().id());
                        upsert.setString(2, tenantId);
                        upsert.setString(3, store.serializer().toJson(change.getValue()));
                        upsert.setObject(4, now);
                        upsert.addBatch();
                        upserts = true;
                    }
                }
                if (upserts) {
                    upsert.executeBatch();
                }
                if (deletes) {
                    delete.executeBatch();
                }
            }
        }
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
