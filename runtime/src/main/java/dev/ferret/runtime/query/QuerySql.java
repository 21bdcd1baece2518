package dev.ferret.runtime.query;

import dev.ferret.DatabaseEngine;
import dev.ferret.Filter;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.ValueKind;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * Renders a document query (filters, order, keyset position, paging) into one statement per engine, with property
 * paths written in and every value a parameter after the tenant's. A path compares as the kind the document class
 * declares there ({@link PropertyTypes}), else as the kind of the value. Owned by one query on one thread.
 */
public final class QuerySql {

    /** A bound value of the statement, after the tenant id. */
    public record Param(ValueKind kind, Object value) {
    }

    /** A statement and its values, the tenant id first. */
    public record Rendered(String sql, List<Param> params) {

        /** Binds the tenant at 1, then the values. */
        public void bind(PreparedStatement ps, String tenantId) throws SQLException {
            ps.setString(1, tenantId);
            for (int i = 0; i < params.size(); i++) {
                params.get(i).kind().bind(ps, i + 2, params.get(i).value());
            }
        }
    }

    private record OrderKey(PropertyPath path, ValueKind kind, boolean descending) {
    }

    private final Dialect dialect;
    private final TableNames names;
    private final DocumentSql documentSql;
    private final Class<?> documentType;
    private final boolean checkPaths;
    /** What to write for a path read as a kind where a declared index covers it; empty where none does. */
    private final BiFunction<String, ValueKind, Optional<String>> indexed;
    private final List<Filter> filters = new ArrayList<>();
    private final List<OrderKey> order = new ArrayList<>();
    private Integer limit;
    private int offset;
    /** The order keys' values of the document to start after, then its id; null when not paging by keyset. */
    private List<Object> after;

    /**
     * @param checkPaths whether a path must name a property {@code documentType} declares (a typo is refused at the
     *                   call rather than matching nothing)
     */
    public QuerySql(Dialect dialect, TableNames names, DocumentSql documentSql, Class<?> documentType,
                    BiFunction<String, ValueKind, Optional<String>> indexed, boolean checkPaths) {
        this.checkPaths = checkPaths;
        this.dialect = dialect;
        this.names = names;
        this.documentSql = documentSql;
        this.documentType = documentType;
        this.indexed = indexed;
    }

    /** Adds {@code filter}, checking its paths and values now. */
    public QuerySql where(Filter filter) {
        render(filter, new ArrayList<>());
        filters.add(filter);
        return this;
    }

    public QuerySql orderBy(String path, boolean descending) {
        PropertyPath parsed = path(path);
        order.add(new OrderKey(parsed, PropertyTypes.at(documentType, parsed).map(ValueKind::ofType)
                .orElse(ValueKind.TEXT), descending));
        return this;
    }

    public QuerySql limit(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("limit must be 1 or more, was " + count);
        }
        this.limit = count;
        return this;
    }

    public QuerySql offset(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("offset must be 0 or more, was " + count);
        }
        this.offset = count;
        return this;
    }

    /** The order keys' paths, for reading a document's values at them. */
    public List<PropertyPath> orderPaths() {
        return order.stream().map(OrderKey::path).toList();
    }

    /**
     * Only documents after the one whose order-key values are {@code keyValues} (in key order, as JSON text or
     * numbers) and whose id is {@code id}.
     */
    public QuerySql startAfter(List<Object> keyValues, String id) {
        List<Object> converted = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            OrderKey key = order.get(i);
            Object value = keyValues.get(i);
            if (value == null) {
                throw new IllegalArgumentException("startAfter: the document holds null at order key '"
                        + key.path().text() + "'; keyset paging needs a value at every order key");
            }
            converted.add(key.kind().convert(value, key.path().text()));
        }
        converted.add(id);
        this.after = converted;
        return this;
    }

    /** The matching documents' JSON, in order, paged. */
    public Rendered select() {
        return select(limit);
    }

    /** {@link #select()} with at most {@code rows} rows (null: no limit). */
    public Rendered select(Integer rows) {
        List<Param> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder(documentSql.selectAll());
        appendFilters(sql, params);
        appendAfter(sql, params);
        sql.append(" ORDER BY ");
        for (OrderKey key : order) {
            sql.append(expression(key.path(), key.kind())).append(key.descending() ? " DESC, " : ", ");
        }
        sql.append("id");
        if (dialect.pagesWithOffsetFetch()) {
            if (rows != null || offset > 0) {
                sql.append(" OFFSET ? ROWS");
                params.add(new Param(ValueKind.NUMBER, offset));
                if (rows != null) {
                    sql.append(" FETCH NEXT ? ROWS ONLY");
                    params.add(new Param(ValueKind.NUMBER, rows));
                }
            }
        } else {
            if (rows != null) {
                sql.append(" LIMIT ?");
                params.add(new Param(ValueKind.NUMBER, rows));
            }
            if (offset > 0) {
                sql.append(" OFFSET ?");
                params.add(new Param(ValueKind.NUMBER, offset));
            }
        }
        return new Rendered(sql.toString(), List.copyOf(params));
    }

    /** How many documents match (order and paging do not count, the keyset position does). */
    public Rendered count() {
        List<Param> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder(documentSql.countAll());
        appendFilters(sql, params);
        appendAfter(sql, params);
        return new Rendered(sql.toString(), List.copyOf(params));
    }

    private void appendFilters(StringBuilder sql, List<Param> params) {
        for (Filter filter : filters) {
            sql.append(" AND ").append(render(filter, params));
        }
    }

    /** {@code (k1 > v1) OR (k1 = v1 AND k2 > v2) OR ... OR (k1 = v1 AND ... AND id > id0)}, each key in its direction. */
    private void appendAfter(StringBuilder sql, List<Param> params) {
        if (after == null) {
            return;
        }
        List<String> alternatives = new ArrayList<>();
        for (int i = 0; i <= order.size(); i++) {
            StringBuilder alternative = new StringBuilder("(");
            for (int j = 0; j < i; j++) {
                OrderKey key = order.get(j);
                alternative.append(expression(key.path(), key.kind())).append(" = ? AND ");
                params.add(new Param(key.kind(), after.get(j)));
            }
            if (i < order.size()) {
                OrderKey key = order.get(i);
                alternative.append(expression(key.path(), key.kind())).append(key.descending() ? " < ?" : " > ?");
                params.add(new Param(key.kind(), after.get(i)));
            } else {
                alternative.append("id > ?");
                params.add(new Param(ValueKind.TEXT, after.get(i)));
            }
            alternatives.add(alternative.append(')').toString());
        }
        sql.append(" AND (").append(String.join(" OR ", alternatives)).append(')');
    }

    private String render(Filter filter, List<Param> params) {
        if (filter instanceof Filter.Compare compare) {
            PropertyPath path = path(compare.path());
            ValueKind kind = kindAt(path, compare.value());
            params.add(new Param(kind, kind.convert(compare.value(), path.text())));
            return expression(path, kind) + " " + compare.operator().sql() + " ?";
        }
        if (filter instanceof Filter.In in) {
            PropertyPath path = path(in.path());
            ValueKind kind = kindAt(path, in.values().get(0));
            List<String> marks = new ArrayList<>();
            for (Object value : in.values()) {
                params.add(new Param(kind, kind.convert(value, path.text())));
                marks.add("?");
            }
            return expression(path, kind) + " IN (" + String.join(", ", marks) + ")";
        }
        if (filter instanceof Filter.Null isNull) {
            return expression(path(isNull.path()), ValueKind.TEXT)
                    + (isNull.isNull() ? " IS NULL" : " IS NOT NULL");
        }
        if (filter instanceof Filter.StartsWith starts) {
            PropertyPath path = path(starts.path());
            params.add(new Param(ValueKind.TEXT, likePrefix(starts.prefix())));
            return expression(path, ValueKind.TEXT) + " LIKE ? ESCAPE '\\'";
        }
        List<Filter> parts = filter instanceof Filter.And and ? and.filters() : ((Filter.Or) filter).filters();
        List<String> rendered = new ArrayList<>();
        for (Filter part : parts) {
            rendered.add(render(part, params));
        }
        return "(" + String.join(filter instanceof Filter.And ? " AND " : " OR ", rendered) + ")";
    }

    /** {@code text} parsed, and checked against the document class where it declares its properties. */
    private PropertyPath path(String text) {
        PropertyPath path = PropertyPath.parse(text);
        if (checkPaths) {
            PropertyTypes.requireDeclared(documentType, path);
        }
        return path;
    }

    /** The declared kind at {@code path}, else the kind of {@code value}'s own type. */
    private ValueKind kindAt(PropertyPath path, Object value) {
        Optional<Class<?>> declared = PropertyTypes.at(documentType, path);
        return ValueKind.ofType(declared.orElse(value.getClass()));
    }

    private String expression(PropertyPath path, ValueKind kind) {
        return indexed.apply(path.text(), kind).orElseGet(() -> dialect.jsonValue(names, path.segments(), kind));
    }

    /** {@code prefix} escaped for {@code LIKE ... ESCAPE '\'}, then {@code %}. */
    private String likePrefix(String prefix) {
        StringBuilder escaped = new StringBuilder();
        for (char c : prefix.toCharArray()) {
            // SQL Server also reads [ ] as a character class
            if (c == '\\' || c == '%' || c == '_' || c == '[' && dialect.engine() == DatabaseEngine.SQL_SERVER) {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.append('%').toString();
    }
}
