package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * What it takes to index a document table, as a dialect renders it.
 *
 * @param ddl               idempotent statements: the generated columns the engine needs, then the index
 * @param queryExpressions  per key part, what a query writes to read the index: the indexed expression itself where
 *                          the engine matches expressions to index keys (PostgreSQL), the generated column's name
 *                          where it does not (H2, SQL Server)
 */
public record DocumentIndexSql(List<String> ddl, List<String> queryExpressions) {

    public DocumentIndexSql {
        ddl = List.copyOf(ddl);
        queryExpressions = List.copyOf(queryExpressions);
    }

    /**
     * A key part of a document index.
     *
     * @param path   the property names, outermost first (validated identifiers)
     * @param kind   how the property compares, which decides the indexed expression
     * @param column the name of the generated column that holds it, where the engine indexes one
     */
    public record Key(List<String> path, ValueKind kind, String column) {

        public Key {
            path = List.copyOf(path);
        }
    }
}
