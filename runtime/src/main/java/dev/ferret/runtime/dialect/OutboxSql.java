package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * Every statement of the side-effect outbox.
 *
 * @param insert           (message_id, shard, seq_id, tenant_id, type, payload, created): in the page's transaction
 * @param selectUndelivered (shard, limit) -&gt; id, message_id, seq_id, tenant_id, type, payload, in id order (the
 *                         shard's publish order)
 * @param markDelivered    (delivered_at, id)
 * @param recordFailure    (last_error, id): counts the attempt and keeps why it failed
 * @param countUndelivered (shard) -&gt; count, oldest created
 * @param deleteDelivered  (cut-off, limit): removes at most {@code limit} rows delivered before the cut-off, so that
 *                         one statement never locks much of the table; run again until fewer were removed
 * @param pendingShards    () -&gt; shard: every shard with an undelivered row, read through
 *                         {@link #undeliveredIndex}, so its cost follows the backlog, not the delivered rows
 */
public record OutboxSql(String insert, String selectUndelivered, String markDelivered, String recordFailure,
                        String countUndelivered, String deleteDelivered, String pendingShards) {

    /**
     * The index the store-wide sweep reads: undelivered rows sit at the front of it (NULL delivered_at), so the
     * sweep touches only those. Every engine indexes NULLs in a B-tree; {@code createIndex} is the engine's
     * statement up to the index's name, which follows it directly.
     */
    public static SchemaObject undeliveredIndex(TableNames t, String createIndex) {
        return SchemaObject.index(t.constraint("ix", "outbox_undelivered"), List.of(createIndex
                + t.constraint("ix", "outbox_undelivered") + " ON " + t.outbox() + " (delivered_at, shard)"));
    }

    /**
     * The statements every engine shares; {@code payloadParameter} and {@code payloadColumn} carry its JSON, and
     * {@code deleteDelivered} is the engine's bounded delete ({@link #deleteDeliveredBatch} on all three today).
     */
    public static OutboxSql of(TableNames t, String payloadParameter, String payloadColumn, String deleteDelivered) {
        String table = t.outbox();
        return new OutboxSql(
                "INSERT INTO " + table + " (message_id, shard, seq_id, tenant_id, type, payload, created, attempts)"
                        + " VALUES (?, ?, ?, ?, ?, " + payloadParameter + ", ?, 0)",
                // OFFSET ... FETCH is the one row limit all three engines take with a parameter
                "SELECT id, message_id, seq_id, tenant_id, type, " + payloadColumn + " FROM " + table
                        + " WHERE shard = ? AND delivered_at IS NULL ORDER BY id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY",
                "UPDATE " + table + " SET delivered_at = ?, attempts = attempts + 1 WHERE id = ?",
                "UPDATE " + table + " SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                "SELECT COUNT(*), MIN(created) FROM " + table + " WHERE shard = ? AND delivered_at IS NULL",
                deleteDelivered,
                "SELECT DISTINCT shard FROM " + table + " WHERE delivered_at IS NULL");
    }

    /** The bounded delete of delivered rows as a limited subquery of ids, the oldest first. */
    public static String deleteDeliveredBatch(TableNames t) {
        return "DELETE FROM " + t.outbox() + " WHERE id IN (SELECT id FROM " + t.outbox()
                + " WHERE delivered_at IS NOT NULL AND delivered_at < ? ORDER BY delivered_at"
                + " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY)";
    }
}
