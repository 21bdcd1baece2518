package dev.ferret.runtime.documents;

import dev.ferret.JsonSerializer;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Pending document writes of one unit of work (a session or a daemon page): the last change per document wins,
 * so a document touched several times is written once. Written in batches, one statement per table and kind.
 * Owned by one thread.
 *
 * <p>A daemon page applies its events one at a time and must take back the writes of an event whose apply threw
 * ({@link #beginUndo}, {@link #undo}, {@link #endUndo}). The undo log holds one entry per write of that event, so
 * it costs what the event wrote, never a copy of the page's pending writes.
 */
public final class DocumentChanges {

    /** A document's identity across tenants and types. */
    public record Key(DocumentMapping<?> mapping, String tenantId, String id) {
    }

    /** Marks a deletion. */
    private static final Object DELETED = new Object();

    /** Marks, in the undo log, a key that had no pending change before. */
    private static final Object ABSENT = new Object();

    /**
     * Most values bound to one array parameter at a time: H2 refuses arrays longer than 65,536, and a page or a unit
     * of work may write more documents of one type than that.
     */
    public static final int MAX_ARRAY_PARAMETER = 10_000;

    private final Map<Key, Object> changes = new LinkedHashMap<>();
    /** What the last {@link #write} stored, per key: the JSON written, or null for a deletion. */
    private final Map<Key, String> written = new LinkedHashMap<>();
    /** While logging: every write since {@link #beginUndo}, with the change its key held before it. */
    private final List<Key> undoKeys = new ArrayList<>();
    private final List<Object> undoPrior = new ArrayList<>();
    private boolean logging;
    /** Every store and delete since {@link #clear}, repeats of a key included. */
    private long made;
    /** The tables whose writes go to their shadows instead (a rebuild's replay); empty otherwise. */
    private Set<DocumentMapping<?>> shadowed = Set.of();

    /** The shadowed tables known to be empty when this unit began: their writes insert, with no upsert. */
    private Set<DocumentMapping<?>> emptyShadows = Set.of();
    /** Documents the unit found missing and that nothing else writes ({@link #markNew}): stored by inserting. */
    private final Set<Key> newKeys = new HashSet<>();

    /**
     * From now on, writes of {@code mappings} go to their {@link ShadowTable}s; {@code empty}: the shadows hold no row
     * yet (a replay's first page), so every document written is new and is inserted rather than upserted.
     */
    public void writeToShadows(Set<DocumentMapping<?>> mappings, boolean empty) {
        this.shadowed = Set.copyOf(mappings);
        this.emptyShadows = empty ? shadowed : Set.of();
    }

    /**
     * {@code key} was read and found missing by a unit of work that is its table's only writer (a snapshot shard):
     * a store of it inserts rather than upserts, so an engine's bulk load can take it. Were it there after all,
     * something else wrote the table, and the insert fails rather than overwrite that row.
     */
    public void markNew(Key key) {
        newKeys.add(key);
    }

    /**
     * Whether any write is insert-only: to a shadow that held no row when this unit began, or of a document found
     * missing ({@link #markNew}).
     */
    public boolean insertsNewDocuments() {
        return !emptyShadows.isEmpty() || !newKeys.isEmpty();
    }

    /** Whether {@code mapping} is written to a shadow that held no row when this unit began. */
    public boolean writesToEmptyShadow(DocumentMapping<?> mapping) {
        return emptyShadows.contains(mapping);
    }

    /** The statements a write of {@code mapping} uses: its own, or its shadow's during a rebuild's replay. */
    public DocumentSql sqlOf(DocumentMapping<?> mapping) {
        return shadowed.contains(mapping) ? mapping.shadow().sql() : mapping.sql();
    }

    public void store(Key key, Object document) {
        put(key, Objects.requireNonNull(document, "document"));
    }

    public void delete(Key key) {
        put(key, DELETED);
    }

    private void put(Key key, Object change) {
        made++;
        Object prior = changes.put(key, change);
        if (logging) {
            // every write is logged, repeats included: undone newest first, the oldest prior is what remains
            undoKeys.add(key);
            undoPrior.add(prior == null ? ABSENT : prior);
        }
    }

    /** Starts logging writes so that {@link #undo} can take them back; a log still open is dropped. */
    public void beginUndo() {
        endUndo();
        logging = true;
    }

    /** Keeps the writes made since {@link #beginUndo} and stops logging. */
    public void endUndo() {
        logging = false;
        undoKeys.clear();
        undoPrior.clear();
    }

    /** Takes back every write made since {@link #beginUndo} and stops logging. */
    public void undo() {
        for (int i = undoKeys.size() - 1; i >= 0; i--) {
            Object prior = undoPrior.get(i);
            if (prior == ABSENT) {
                changes.remove(undoKeys.get(i));
            } else {
                // the key is still present, so its place in the write order is unchanged
                changes.put(undoKeys.get(i), prior);
            }
        }
        endUndo();
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
    public void forEach(BiConsumer<Key, Object> action) {
        changes.forEach((key, change) -> action.accept(key, change == DELETED ? null : change));
    }

    /**
     * How many stores and deletes were made since {@link #clear}, a key written again counting again: the documents
     * a page built, of which the pending changes keep the last per key.
     */
    public long changesMade() {
        return made;
    }

    /** How many documents the last {@link #write} stored or deleted. */
    public int writtenCount() {
        return written.size();
    }

    /** What the last {@link #write} stored: each key with the JSON written, or null for a deletion. */
    public void forEachWritten(BiConsumer<Key, String> action) {
        written.forEach(action);
    }

    public void clear() {
        changes.clear();
        written.clear();
        newKeys.clear();
        made = 0;
        endUndo();
    }

    /** Writes everything on {@code connection}, inside the caller's transaction. */
    public void write(Connection connection, Dialect dialect, JsonSerializer serializer, OffsetDateTime now)
            throws SQLException {
        written.clear();
        Map<DocumentMapping<?>, List<Map.Entry<Key, Object>>> byMapping = new LinkedHashMap<>();
        for (Map.Entry<Key, Object> change : changes.entrySet()) {
            byMapping.computeIfAbsent(change.getKey().mapping(), m -> new ArrayList<>()).add(change);
        }
        for (Map.Entry<DocumentMapping<?>, List<Map.Entry<Key, Object>>> group : byMapping.entrySet()) {
            DocumentMapping<?> mapping = group.getKey();
            DocumentSql sql = sqlOf(mapping);
            boolean allNew = emptyShadows.contains(mapping);
            DocumentRows upserts = new DocumentRows();
            DocumentRows inserts = new DocumentRows();
            List<Key> deletes = new ArrayList<>();
            for (Map.Entry<Key, Object> change : group.getValue()) {
                Key key = change.getKey();
                if (change.getValue() == DELETED) {
                    written.put(key, null);
                    deletes.add(key);
                    continue;
                }
                String json = serializer.toJson(change.getValue());
                mapping.checkIndexedValues(key.tenantId(), key.id(), json);
                written.put(key, json);
                (allNew || newKeys.contains(key) ? inserts : upserts).add(key, json);
            }
            upserts.write(connection, dialect, sql, now, false);
            inserts.write(connection, dialect, sql, now, true);
            if (!deletes.isEmpty()) {
                try (PreparedStatement delete = connection.prepareStatement(sql.delete())) {
                    for (Key key : deletes) {
                        delete.setString(1, key.tenantId());
                        delete.setString(2, key.id());
                        delete.addBatch();
                    }
                    delete.executeBatch();
                }
            }
        }
    }
}
