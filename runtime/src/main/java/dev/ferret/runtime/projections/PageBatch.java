package dev.ferret.runtime.projections;

import dev.ferret.daemon.ChangeSet;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The documents one page reads and writes, over the page's transaction. Reads see the page's own pending writes
 * first; committed state is read at most once per document. Owned by the thread applying the page.
 */
public final class PageBatch {

    private final FerretDocumentStore store;
    private final Connection connection;
    private final DocumentChanges changes;
    /** Committed state read so far: the document, or null when it did not exist. */
    private final Map<Key, Object> committed = new HashMap<>();
    private final Map<String, Operations> operationsByTenant = new HashMap<>();
    private final List<dev.ferret.subscriptions.PostCommitListener> postCommit = new ArrayList<>();
    private final List<Object> messages = new ArrayList<>();
    private final List<RaisedEvent> raisedEvents = new ArrayList<>();

    /** An event a projection raised, to append after the commit. */
    public record RaisedEvent(String tenantId, String streamId, Object event) {
    }

    /** Side effects raised while applying events of {@code tenantId}; held until the page commits. */
    public dev.ferret.projections.SideEffects sideEffects(String tenantId) {
        return new dev.ferret.projections.SideEffects() {
            @Override
            public void publish(Object message) {
                messages.add(java.util.Objects.requireNonNull(message, "message"));
            }

            @Override
            public void appendEvent(String streamId, Object event) {
                raisedEvents.add(new RaisedEvent(tenantId, streamId, java.util.Objects.requireNonNull(event, "event")));
            }
        };
    }

    public List<Object> publishedMessages() {
        return List.copyOf(messages);
    }

    public List<RaisedEvent> raisedEvents() {
        return List.copyOf(raisedEvents);
    }

    public PageBatch(FerretDocumentStore store, Connection connection, DocumentChanges changes) {
        this.store = store;
        this.connection = connection;
        this.changes = changes;
    }

    /** Registers work for after the page's commit. */
    public void afterCommit(dev.ferret.subscriptions.PostCommitListener listener) {
        if (listener != null && listener != dev.ferret.subscriptions.PostCommitListener.NONE) {
            postCommit.add(listener);
        }
    }

    public List<dev.ferret.subscriptions.PostCommitListener> postCommitListeners() {
        return List.copyOf(postCommit);
    }

    public DocumentChanges changes() {
        return changes;
    }

    public DocumentOperations operations(String tenantId) {
        return operationsByTenant.computeIfAbsent(tenantId, Operations::new);
    }

    /** The document's current state in this page, or null when it does not exist (or was deleted in it). */
    public Object current(Key key) throws SQLException {
        if (changes.isPending(key)) {
            return changes.pending(key);
        }
        if (!committed.containsKey(key)) {
            preload(key.mapping(), key.tenantId(), List.of(key.id()));
        }
        return committed.get(key);
    }

    /** Reads the committed state of many documents in one statement, skipping those already known. */
    public void preload(DocumentMapping<?> mapping, String tenantId, Collection<String> ids) throws SQLException {
        List<String> unknown = new ArrayList<>();
        for (String id : ids) {
            Key key = new Key(mapping, tenantId, id);
            if (!committed.containsKey(key) && !changes.isPending(key)) {
                committed.put(key, null);
                unknown.add(id);
            }
        }
        if (unknown.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = connection.prepareStatement(mapping.sql().loadMany())) {
            ps.setString(1, tenantId);
            store.dialect().bindIds(connection, ps, 2, unknown);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Object document = store.serializer().fromJson(rs.getString(1), mapping.type());
                    committed.put(new Key(mapping, tenantId, mapping.idOf(document)), document);
                }
            }
        }
    }

    /** What this page wrote, per tenant, for the async listeners. */
    public List<ChangeSet> changeSets(String shardName) {
        Map<String, List<Object>> inserted = new LinkedHashMap<>();
        Map<String, List<Object>> updated = new LinkedHashMap<>();
        Map<String, List<ChangeSet.DeletedDocument>> deleted = new LinkedHashMap<>();
        Set<String> tenants = new HashSet<>();
        changes.forEach((key, document) -> {
            tenants.add(key.tenantId());
            if (document == null) {
                deleted.computeIfAbsent(key.tenantId(), t -> new ArrayList<>())
                        .add(new ChangeSet.DeletedDocument(key.mapping().type(), key.id()));
            } else if (committed.containsKey(key) && committed.get(key) == null) {
                inserted.computeIfAbsent(key.tenantId(), t -> new ArrayList<>()).add(document);
            } else {
                updated.computeIfAbsent(key.tenantId(), t -> new ArrayList<>()).add(document);
            }
        });
        List<ChangeSet> sets = new ArrayList<>();
        for (String tenant : tenants) {
            sets.add(new ChangeSet(shardName, tenant, List.copyOf(inserted.getOrDefault(tenant, List.of())),
                    List.copyOf(updated.getOrDefault(tenant, List.of())),
                    List.copyOf(deleted.getOrDefault(tenant, List.of()))));
        }
        return sets;
    }

    private final class Operations implements DocumentOperations {

        private final String tenantId;

        Operations(String tenantId) {
            this.tenantId = tenantId;
        }

        @Override
        public String tenantId() {
            return tenantId;
        }

        @Override
        public <T> Optional<T> load(Class<T> type, Object id) {
            DocumentMapping<T> mapping = store.mapping(type);
            try {
                return Optional.ofNullable(type.cast(current(new Key(mapping, tenantId, mapping.idFrom(id)))));
            } catch (SQLException e) {
                throw new PageReadException(e);
            }
        }

        @Override
        public void store(Object document) {
            DocumentMapping<?> mapping = store.mapping(document.getClass());
            changes.store(new Key(mapping, tenantId, mapping.idOf(document)), document);
        }

        @Override
        public void delete(Class<?> type, Object id) {
            DocumentMapping<?> mapping = store.mapping(type);
            changes.delete(new Key(mapping, tenantId, mapping.idFrom(id)));
        }
    }

    /** A database read failed inside projection code; carries the SQLException out to the page's retry logic. */
    public static final class PageReadException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        PageReadException(SQLException cause) {
            super(cause);
        }

        @Override
        public synchronized SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }
}
