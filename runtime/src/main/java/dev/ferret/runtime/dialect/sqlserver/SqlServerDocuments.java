package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.IdLimits;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.ValueKind;
import java.util.ArrayList;
import java.util.List;

/**
 * SQL Server's statements for document tables: the table, its reads and writes, its declared indexes as persisted
 * computed columns, and the JSON_VALUE expressions queries and indexes share (one text for both, so the optimizer
 * matches the column). Golden-tested with the rest of the dialect.
 */
final class SqlServerDocuments {

    private SqlServerDocuments() {
    }

    static SchemaObject table(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new SchemaObject(t.documentTableName(documentName), List.of(
                "IF OBJECT_ID(N'" + table + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + table + " (\n"
                        + "  id " + SqlServerDialect.ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL,\n"
                        + "  data NVARCHAR(MAX) NOT NULL CONSTRAINT " + t.constraint("ck", "doc_" + documentName)
                        + " CHECK (ISJSON(data) = 1),\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  last_modified DATETIMEOFFSET NOT NULL,\n"
                        + "  CONSTRAINT " + t.constraint("pk", "doc_" + documentName)
                        + " PRIMARY KEY CLUSTERED (tenant_id, id)\n"
                        + ")"));
    }

    static DocumentSql statements(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new DocumentSql(
                "MERGE " + table + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?)) AS source (id, tenant_id, data, last_modified)"
                        + " ON target.tenant_id = source.tenant_id" + SqlServerDialect.KEY
                        + " AND target.id = source.id" + SqlServerDialect.KEY
                        + " WHEN MATCHED THEN UPDATE SET target.data = source.data,"
                        + " target.version = target.version + 1, target.last_modified = source.last_modified"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified)"
                        + " VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);",
                "DELETE FROM " + table + " WHERE tenant_id = ? AND id = ?",
                "SELECT data FROM " + table + " WHERE tenant_id = ? AND id = ?",
                // OPENJSON's value is NVARCHAR(MAX); cast to the column's own type the comparison can seek the
                // key. A CAST cuts a longer string silently, so a requested id longer than the column (2 bytes a
                // code unit) is left out instead: no document can have it, and cut it could match another one
                // OPENJSON's value takes its collation from OPENJSON, not from the key; were both Implicit and
                // different, IN would fail (Cannot resolve the collation conflict): COLLATE makes it the key's
                "SELECT data FROM " + table + " WHERE tenant_id = ? AND id IN (SELECT CAST(value AS " + SqlServerDialect.ID_TYPE
                        + ") COLLATE " + SqlServerDialect.KEY_COLLATION + " FROM OPENJSON(?) WHERE DATALENGTH(value) <= "
                        + 2 * IdLimits.MAX_ID_LENGTH + ")",
                "SELECT data FROM " + table + " WHERE tenant_id = ?",
                "SELECT COUNT_BIG(*) FROM " + table + " WHERE tenant_id = ?",
                "DELETE FROM " + table,
                "DELETE FROM " + table + " WHERE tenant_id = ?",
                "",
                // no key-range locks to take, unlike the MERGE: nothing can exist to be matched
                "INSERT INTO " + table + " (id, tenant_id, data, version, last_modified) VALUES (?, ?, ?, 1, ?)",
                "",
                // no bulk load: the driver's SQLServerBulkCopy streams rows past any statement a golden test can
                // check, and no SQL Server runs where this is built (guide, Rebuild)
                "");
    }

    static DocumentIndexSql index(TableNames names, String documentName, String indexName,
                                  List<DocumentIndexSql.Key> keys, boolean unique) {
        // persisted computed columns over the same deterministic JSON_VALUE the query would write, named by the query
        String table = names.document(documentName);
        List<String> ddl = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        for (DocumentIndexSql.Key key : keys) {
            ddl.add("IF COL_LENGTH(N'" + table + "', N'" + key.column() + "') IS NULL\n"
                    + "ALTER TABLE " + table + " ADD " + key.column() + " AS " + value(key.path(), key.kind())
                    + " PERSISTED");
            columns.add(key.column());
        }
        // A unique index counts NULLs as equal here, and a filtered index cannot name a computed column in its
        // filter: a guard column in the key is NULL when every property is present (the keys alone decide) and the
        // row's id otherwise, so documents without a property never collide. A computed column cannot read another
        // one, so the guard repeats the keys' expressions.
        String guard = "";
        if (unique) {
            String guardColumn = guardColumn(indexName);
            String allPresent = String.join(" AND ", keys.stream()
                    .map(key -> value(key.path(), key.kind()) + " IS NOT NULL").toList());
            ddl.add("IF COL_LENGTH(N'" + table + "', N'" + guardColumn + "') IS NULL\n"
                    + "ALTER TABLE " + table + " ADD " + guardColumn + " AS CASE WHEN " + allPresent
                    + " THEN NULL ELSE id END PERSISTED");
            guard = ", " + guardColumn;
        }
        ddl.add("IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + indexName + "' AND object_id = OBJECT_ID(N'"
                + table + "'))\n"
                + "CREATE " + (unique ? "UNIQUE " : "") + "INDEX " + indexName + " ON " + table + " (tenant_id, "
                + String.join(", ", columns) + (unique ? guard : ", id") + ")");
        return new DocumentIndexSql(ddl, columns);
    }

    /** The guard column of unique index {@code indexName}: its name with a {@code g_} prefix, within 128 characters. */
    static String guardColumn(String indexName) {
        return "g_" + indexName;
    }

    static String text(List<String> path) {
        // the parts are validated identifiers, so quoting them in the path is all the escaping needed; a literal
        // path (not a parameter) is what lets a computed column over the same JSON_VALUE match
        return "JSON_VALUE(data, '$.\"" + String.join("\".\"", path) + "\"')";
    }

    /**
     * Text values compare in the binary collation the keys use, whatever the database's default (usually
     * case-insensitive, which JSON_VALUE's nvarchar would take): {@code eq("status", "open")} never matches
     * {@code OPEN} here, as on PostgreSQL and H2, and a unique text index keeps {@code A} and {@code a} apart.
     */
    static String value(List<String> path, ValueKind kind) {
        return switch (kind) {
            case TEXT -> text(path) + " COLLATE " + SqlServerDialect.KEY_COLLATION;
            case NUMBER -> number(path);
            case TIMESTAMP -> timestamp(path);
        };
    }

    /**
     * A number as {@code DECIMAL(38, 10)}: exact for the plain form JSON-B writes for integers, longs and decimals. A
     * double JSON-B writes in exponent form ({@code 1.0E7}, {@code 2.5E-4}) is not a decimal literal, so it goes
     * through {@code FLOAT} first, which parses it and holds every double; its 17 significant digits are all a double
     * has. What is still NULL lies beyond {@code DECIMAL(38, 10)} (28 integer digits), and an index refuses it at
     * save ({@link SqlServerDialect#indexKeyLimit}).
     */
    static String number(List<String> path) {
        String text = text(path);
        return "COALESCE(TRY_CAST(" + text + " AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(" + text
                + " AS FLOAT) AS DECIMAL(38, 10)))";
    }

    /**
     * A point in time through style 127 (ISO 8601 with {@code Z} or a {@code +hh:mm} offset): a conversion from text
     * with a constant style above 100 is deterministic, so the index column can be {@code PERSISTED}, and ISO 8601 is
     * read alike under every SET LANGUAGE and DATEFORMAT. {@code DATETIMEOFFSET} takes at most 7 fractional digits
     * and JSON-B writes up to 9: the digits past the seventh are cut, so values compare to 100 ns (PostgreSQL and H2
     * compare to 1 µs). The text is read in the binary collation so that {@code [0-9]} means the ten digits.
     */
    static String timestamp(List<String> path) {
        String text = text(path) + " COLLATE " + SqlServerDialect.KEY_COLLATION;
        String dot = "CHARINDEX(N'.', " + text + ")";
        String fractionDigits = "PATINDEX(N'%[^0-9]%', SUBSTRING(" + text + ", " + dot + " + 1, 4000)) - 1";
        String atMostSeven = "CASE WHEN " + text + " LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%'"
                + " THEN STUFF(" + text + ", " + dot + " + 8, " + fractionDigits + " - 7, N'') ELSE " + text + " END";
        return "TRY_CONVERT(DATETIMEOFFSET(7), " + atMostSeven + ", 127)";
    }
}
