package dev.ferret.runtime.dialect;

/**
 * Every statement of the side-effect outbox.
 *
 * @param insert           (message_id, shard, seq_id, tenant_id, type, payload, created): in the page's transaction
 * @param selectUndelivered (shard, limit) -&gt; id, message_id, seq_id, tenant_id, type, payload, in id order (the
 *                         shard's publish order)
 * @param markDelivered    (delivered_at, id)
 * @param recordFailure    (last_error, id): counts the attempt and keeps why it failed
 * @param countUndelivered (shard) -&gt; count, oldest created
 * @param deleteDelivered  (cut-off): removes rows delivered before it
 */
public record OutboxSql(String insert, String selectUndelivered, String markDelivered, String recordFailure,
                        String countUndelivered, String deleteDelivered) {

    /** The statements every engine shares; {@code payloadParameter} and {@code payloadColumn} carry its JSON. */
    public static OutboxSql of(TableNames t, String payloadParameter, String payloadColumn) {
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
                "DELETE FROM " + table + " WHERE delivered_at IS NOT NULL AND delivered_at < ?");
    }
}
