package dev.ferret.runtime.documents;

import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.TableNames;

/**
 * The table a rebuild of a projection replays into while queries keep reading the live one, and the statements that
 * swap it in: the live rows (a tenant's, or all) are replaced by the shadow's and the shadow is emptied, in the
 * transaction that moves the progression, so a reader sees the old read model or the new one, never a partial one.
 *
 * <p>It has the live table's columns and key but none of its declared indexes: the replay upserts by key only, and
 * the live table's indexes take the rows at the swap.
 *
 * @param sql         the replay's reads and writes, as the live table's statements name the live table
 * @param table       created with the live table, empty between rebuilds
 * @param copyAll     {@code INSERT INTO live SELECT FROM shadow}: every row
 * @param copyTenant  the same for one tenant's rows (parameter: the tenant)
 */
public record ShadowTable(DocumentSql sql, SchemaObject table, String copyAll, String copyTenant) {

    /** Appended to the live document name: {@code <prefix>doc_<name>_rebuild}. */
    public static final String SUFFIX = "_rebuild";

    private static final String COLUMNS = "id, tenant_id, data, version, last_modified";

    public static ShadowTable of(String documentName, Dialect dialect, TableNames names) {
        String shadowName = documentName + SUFFIX;
        String copy = "INSERT INTO " + names.document(documentName) + " (" + COLUMNS + ") SELECT " + COLUMNS
                + " FROM " + names.document(shadowName);
        return new ShadowTable(dialect.documentSql(names, shadowName), dialect.documentTable(names, shadowName),
                copy, copy + " WHERE tenant_id = ?");
    }
}
