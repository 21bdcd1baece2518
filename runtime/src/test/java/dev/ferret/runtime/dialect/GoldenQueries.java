package dev.ferret.runtime.dialect;

import dev.ferret.Filter;
import dev.ferret.runtime.query.QuerySql;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Representative document queries, rendered for the golden files: every statement shape a query can take. */
final class GoldenQueries {

    /** The document the queries run over. */
    record Order(String id, String status, int total, Instant placedAt, Customer customer) {
    }

    record Customer(String id, Address address) {
    }

    record Address(String city) {
    }

    private GoldenQueries() {
    }

    static void render(Dialect dialect, TableNames names, Map<String, String> statements) {
        DocumentSql sql = dialect.documentSql(names, "order_summary");
        statements.put("query.equalsText", query(dialect, names, sql).where(Filter.eq("status", "open"))
                .select().sql());
        statements.put("query.rangeOrderedPage", query(dialect, names, sql)
                .where(Filter.and(Filter.ge("total", 100), Filter.lt("total", 500)))
                .orderBy("total", true).limit(50).offset(100).select().sql());
        statements.put("query.nestedInNullPrefixOr", query(dialect, names, sql)
                .where(Filter.or(Filter.in("customer.address.city", List.of("Oslo", "Lyon")),
                        Filter.isNull("customer.id"), Filter.startsWith("status", "op")))
                .select().sql());
        statements.put("query.timestampKeyset", query(dialect, names, sql).where(Filter.gt("placedAt",
                        Instant.parse("2026-01-01T00:00:00Z")))
                .orderBy("placedAt", false).orderBy("total", true).limit(20)
                .startAfter(List.of("2026-02-01T00:00:00Z", new BigDecimal("42")), "o-9").select().sql());
        statements.put("query.count", query(dialect, names, sql).where(Filter.ne("status", "closed")).count().sql());
        index(statements, "index.text", dialect.documentIndex(names, "order_summary", "ix_pc_doc_order_summary_status",
                List.of(new DocumentIndexSql.Key(List.of("status"), ValueKind.TEXT, "q_status")), false));
        index(statements, "index.uniqueCompositeNested", dialect.documentIndex(names, "order_summary",
                "ux_pc_doc_order_summary_customer_id_total", List.of(
                        new DocumentIndexSql.Key(List.of("customer", "id"), ValueKind.TEXT, "q_customer_id"),
                        new DocumentIndexSql.Key(List.of("total"), ValueKind.NUMBER, "q_total")), true));
    }

    private static void index(Map<String, String> statements, String name, DocumentIndexSql sql) {
        for (int i = 0; i < sql.ddl().size(); i++) {
            statements.put(name + ".ddl[" + i + "]", sql.ddl().get(i));
        }
        statements.put(name + ".queryExpressions", String.join(" | ", sql.queryExpressions()));
    }

    private static QuerySql query(Dialect dialect, TableNames names, DocumentSql sql) {
        return new QuerySql(dialect, names, sql, Order.class, (path, kind) -> Optional.empty(), true);
    }
}
