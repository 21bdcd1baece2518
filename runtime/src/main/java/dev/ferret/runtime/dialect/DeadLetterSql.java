package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * The statements an operator's view of the dead letters issues, all on the shard index {@code (projection, id)}.
 *
 * @param list   (projection, after id, limit) -&gt; id, projection, seq_id, type, tenant_id, exception_type, message,
 *               timestamp, stream_id, data: one page in id order, with the event's row when it is still in the log
 * @param one    (projection, id) -&gt; the same columns for one dead letter
 * @param counts () -&gt; projection, count
 * @param delete (projection, id): one row affected or none
 */
public record DeadLetterSql(String list, String one, String counts, String delete) {

    static DeadLetterSql of(TableNames t, boolean offsetFetch) {
        // ordered by the whole index key (the projection is fixed by the filter): H2 then reads it in order and
        // stops at the limit, as the other engines do with the id alone
        String select = "SELECT d.id, d.projection, d.seq_id, d.type, d.tenant_id, d.exception_type, d.message,"
                + " d.timestamp, e.stream_id, e.data FROM " + t.deadLetters() + " d LEFT JOIN " + t.events()
                + " e ON e.seq_id = d.seq_id WHERE d.projection = ?";
        return new DeadLetterSql(
                select + " AND d.id > ? ORDER BY d.projection, d.id" + (offsetFetch ? " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY"
                        : " LIMIT ?"),
                select + " AND d.id = ?",
                "SELECT projection, COUNT(*) FROM " + t.deadLetters() + " GROUP BY projection",
                "DELETE FROM " + t.deadLetters() + " WHERE projection = ? AND id = ?");
    }

    /** The shard index, for an engine whose {@code CREATE INDEX} takes {@code IF NOT EXISTS}. */
    public static SchemaObject shardIndex(TableNames t) {
        return shardIndex(t, "CREATE INDEX IF NOT EXISTS " + t.constraint("ix", "dead_letters_shard") + " ON "
                + t.deadLetters() + " (projection, id)");
    }

    public static SchemaObject shardIndex(TableNames t, String ddl) {
        return SchemaObject.index(t.constraint("ix", "dead_letters_shard"), List.of(ddl));
    }
}
