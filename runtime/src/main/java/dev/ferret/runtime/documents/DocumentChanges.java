package dev.ferret.runtime.documents;

import dev.ferret.JsonSerializer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pending document writes of one unit of work (a session or a daemon page): the last change per document wins,
 * so a document touched several times is written once. Written in batches, one statement per table and kind.
 * Owned by one thread.
 */
public final class DocumentChanges {

    /** A document's identity across tenants and types. */
    public record Key(DocumentMapping<?> mapping, String tenantId, String id) {
    }

    /** Marks a deletion. */
    private static final Object DELETED = new Object();

    private final Map<Key, Object> changes = new LinkedHashMap<>();

    public void store(Key key, Object document) {
        changes.put(key, document);
    }

    public void delete(Key key) {
        changes.put(key, DELETED);
    }

    /** Whether {@code key} has a pending change. */
    public boolean isPending(Key key) {
        return changes.containsKey(key);
    }

    /** The pending document for {@code key}, or null when it is pending deletion. Check {@link #isPending} first. */
    public Object pending(Key key) {
        Object change = changes.get(key);
        return change == DELETED ? null : change;
    }

    public boolean isEmpty() {
        return changes.isEmpty();
    }

    public int size() {
        return changes.size();
    }

    /** Every pending change, in the order first made: the document, or null for a deletion. */
    public void forEach(java.util.function.BiConsumer<Key, Object> action) {
        changes.forEach((key, change) -> action.accept(key, change == DELETED ? null : change));
    }

    public void clear() {
        changes.clear();
    }

    /** Writes everything on {@code connection}, inside the caller's transaction. */
    public void write(Connection connection, JsonSerializer serializer, OffsetDateTime now) throws SQLException {
        Map<DocumentMapping<?>, List<Map.Entry<Key, Object>>> byMapping = new LinkedHashMap<>();
        for (Map.Entry<Key, Object> change : changes.entrySet()) {
            byMapping.computeIfAbsent(change.getKey().mapping(), m -> new ArrayList<>()).add(change);
        }
        for (Map.Entry<DocumentMapping<?>, List<Map.Entry<Key, Object>>> group : byMapping.entrySet()) {
            DocumentMapping<?> mapping = group.getKey();
            PreparedStatement upsert = null;
            PreparedStatement delete = null;
            try {
                for (Map.Entry<Key, Object> change : group.getValue()) {
                    Key key = change.getKey();
                    if (change.getValue() == DELETED) {
                        if (delete == null) {
                            delete = connection.prepareStatement(mapping.sql().delete());
                        }
                        delete.setString(1, key.tenantId());
                        delete.setString(2, key.id());
                        delete.addBatch();
                    } else {
                        if (upsert == null) {
                            upsert = connection.prepareStatement(mapping.sql().upsert());
                        }
                        upsert.setString(1, key.id());
                        upsert.setString(2, key.tenantId());
                        upsert.setString(3, serializer.toJson(change.getValue()));
                        upsert.setObject(4, now);
                        upsert.addBatch();
                    }
                }
                if (upsert != null) {
                    upsert.executeBatch();
                }
                if (delete != null) {
                    delete.executeBatch();
                }
            } finally {
                if (upsert != null) {
                    upsert.close();
                }
                if (delete != null) {
                    delete.close();
                }
            }
        }
    }
}
