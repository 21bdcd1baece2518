package dev.ferret.runtime.dialect;

/**
 * Every statement issued against one document table.
 *
 * @param upsert       (id, tenant_id, data, last_modified): insert, or replace and bump the version
 * @param delete       (tenant_id, id)
 * @param load         (tenant_id, id) -&gt; data
 * @param loadMany     (tenant_id, ids as {@link Dialect#bindIds bound by the dialect}) -&gt; data
 * @param selectAll    (tenant_id) -&gt; data; a query appends its filters as {@code AND} conditions (see
 *                     {@code runtime.query.QuerySql})
 * @param countAll     (tenant_id) -&gt; count; filters appended the same way
 * @param deleteAll    () every document of every tenant, for a projection rebuild
 * @param deleteTenant (tenant_id) every document of one tenant, for a one-tenant rebuild
 * @param upsertMany   (last_modified, then ids, tenant ids and data {@link Dialect#bindUpsertMany bound by the
 *                     dialect}): {@link #upsert} of many documents in one statement; empty where the engine runs
 *                     {@code upsert} as a JDBC batch instead
 * @param insert       (id, tenant_id, data, last_modified): insert only, at version 1, for a document known not to
 *                     exist (a rebuild's first page into an empty shadow table); a key that exists fails it
 * @param insertMany   {@link #insert} of many documents in one statement, bound as {@link #upsertMany}; empty where
 *                     {@link #upsertMany} is
 * @param copyIn       the engine's bulk load of new documents ({@link Dialect#bulkCopy}), rows of (id, tenant_id,
 *                     data, version, last_modified); empty where the engine has none
 */
public record DocumentSql(String upsert, String delete, String load, String loadMany, String selectAll,
                          String countAll, String deleteAll, String deleteTenant, String upsertMany, String insert,
                          String insertMany, String copyIn) {

    /** Whether {@link #upsertMany} (and {@link #insertMany}) is there to use. */
    public boolean upsertsInOneStatement() {
        return !upsertMany.isEmpty();
    }

    /** Whether {@link #copyIn} is there to use (with a connection the dialect's {@link BulkCopy} supports). */
    public boolean copies() {
        return !copyIn.isEmpty();
    }
}
