package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.TableNames;

/**
 * PostgreSQL's statements of one document table: upserts with {@code ON CONFLICT}, reads by primary-key seeks, a
 * page's documents as one statement over arrays, and the {@code COPY} of new ones. Golden-tested with the rest of the
 * dialect.
 */
final class PostgresDocuments {

    private PostgresDocuments() {
    }

    static DocumentSql statements(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new DocumentSql(
                "INSERT INTO " + table + " AS d (id, tenant_id, data, version, last_modified)"
                        + " VALUES (?, ?, ?::jsonb, 1, ?)"
                        + " ON CONFLICT (tenant_id, id) DO UPDATE"
                        + " SET data = EXCLUDED.data, version = d.version + 1, last_modified = EXCLUDED.last_modified",
                "DELETE FROM " + table + " WHERE tenant_id = ? AND id = ?",
                "SELECT data FROM " + table + " WHERE tenant_id = ? AND id = ?",
                // one primary-key seek per id whatever the statistics say: on a table that grew since its last
                // ANALYZE, "id = ANY (?)" (or a plain join) is planned as a scan of the tenant's rows. The LIMIT
                // keeps the lateral subquery from being flattened into such a join.
                "SELECT d.data FROM (VALUES (CAST(? AS varchar))) AS t(tenant_id)"
                        + " CROSS JOIN unnest(CAST(? AS varchar[])) AS k(id)"
                        + " CROSS JOIN LATERAL (SELECT x.data FROM " + table + " x"
                        + " WHERE x.tenant_id = t.tenant_id AND x.id = k.id LIMIT 1) AS d",
                "SELECT data FROM " + table + " WHERE tenant_id = ?",
                "SELECT count(*) FROM " + table + " WHERE tenant_id = ?",
                "DELETE FROM " + table,
                "DELETE FROM " + table + " WHERE tenant_id = ?",
                // one statement for a page's documents instead of one execution per document; the map they come
                // from holds each key once, so no row is hit twice (which ON CONFLICT refuses)
                "INSERT INTO " + table + " AS d (id, tenant_id, data, version, last_modified)"
                        + " SELECT u.id, u.tenant_id, CAST(u.data AS jsonb), 1, ?"
                        + " FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS text[]))"
                        + " AS u(id, tenant_id, data)"
                        + " ON CONFLICT (tenant_id, id) DO UPDATE"
                        + " SET data = EXCLUDED.data, version = d.version + 1, last_modified = EXCLUDED.last_modified",
                "INSERT INTO " + table + " (id, tenant_id, data, version, last_modified) VALUES (?, ?, ?::jsonb, 1, ?)",
                "INSERT INTO " + table + " (id, tenant_id, data, version, last_modified)"
                        + " SELECT u.id, u.tenant_id, CAST(u.data AS jsonb), 1, ?"
                        + " FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS text[]))"
                        + " AS u(id, tenant_id, data)",
                "COPY " + table + " (id, tenant_id, data, version, last_modified) FROM STDIN");
    }
}
