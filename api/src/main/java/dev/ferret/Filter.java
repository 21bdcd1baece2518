package dev.ferret;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A condition on a document's JSON properties, for {@link DocumentQuery#where(Filter)}. A path names a property,
 * nested properties joined by dots ({@code "customer.address.city"}); each part is a Java identifier. Values are
 * always bound as parameters, and compare by the type the document class declares for the path (numbers as numbers,
 * instants and offset date-times as points in time, everything else as JSON text), or by the value's own type where
 * the class does not say (a {@code Map}, an {@code Object}).
 *
 * <pre>{@code
 * session.query(Order.class)
 *         .where(Filter.and(Filter.eq("status", "open"), Filter.or(Filter.ge("total", 100), Filter.eq("vip", true))))
 *         .orderByDescending("total").limit(50).toList();
 * }</pre>
 */
public sealed interface Filter {

    /** A comparison operator. */
    enum Operator {
        EQ("="), NE("<>"), LT("<"), LE("<="), GT(">"), GE(">=");

        private final String sql;

        Operator(String sql) {
            this.sql = sql;
        }

        /** The SQL operator. */
        public String sql() {
            return sql;
        }
    }

    /** {@code path op value}; a document whose property is missing or null does not match. */
    record Compare(String path, Operator operator, Object value) implements Filter {
        public Compare {
            Objects.requireNonNull(operator, "operator");
            requireValue(path, value);
        }
    }

    /** The property equals one of {@code values}. */
    record In(String path, List<?> values) implements Filter {
        public In {
            Objects.requireNonNull(values, () -> "values of in(\"" + path + "\", ...)");
            if (values.isEmpty()) {
                throw new IllegalArgumentException("in(\"" + path + "\", ...) needs at least one value");
            }
            values.forEach(v -> requireValue(path, v));
            values = List.copyOf(values);
        }
    }

    /** The property is missing or null ({@code isNull}), or holds a value ({@code !isNull}). */
    record Null(String path, boolean isNull) implements Filter {
    }

    /** The property's text starts with {@code prefix} (matched literally: {@code %} and {@code _} are plain). */
    record StartsWith(String path, String prefix) implements Filter {
        public StartsWith {
            Objects.requireNonNull(prefix, () -> "prefix of startsWith(\"" + path + "\", ...)");
        }
    }

    /** Every filter holds. */
    record And(List<Filter> filters) implements Filter {
        public And {
            filters = requireFilters("and", filters);
        }
    }

    /** At least one filter holds. */
    record Or(List<Filter> filters) implements Filter {
        public Or {
            filters = requireFilters("or", filters);
        }
    }

    static Filter eq(String path, Object value) {
        return new Compare(path, Operator.EQ, value);
    }

    static Filter ne(String path, Object value) {
        return new Compare(path, Operator.NE, value);
    }

    static Filter lt(String path, Object value) {
        return new Compare(path, Operator.LT, value);
    }

    static Filter le(String path, Object value) {
        return new Compare(path, Operator.LE, value);
    }

    static Filter gt(String path, Object value) {
        return new Compare(path, Operator.GT, value);
    }

    static Filter ge(String path, Object value) {
        return new Compare(path, Operator.GE, value);
    }

    static Filter in(String path, Collection<?> values) {
        return new In(path, values == null ? null : List.copyOf(values));
    }

    static Filter isNull(String path) {
        return new Null(path, true);
    }

    static Filter isNotNull(String path) {
        return new Null(path, false);
    }

    static Filter startsWith(String path, String prefix) {
        return new StartsWith(path, prefix);
    }

    static Filter and(Filter... filters) {
        return new And(filters == null ? null : List.of(filters));
    }

    static Filter or(Filter... filters) {
        return new Or(filters == null ? null : List.of(filters));
    }

    private static void requireValue(String path, Object value) {
        if (value == null) {
            throw new IllegalArgumentException("a value compared with '" + path + "' must not be null; use"
                    + " Filter.isNull(\"" + path + "\")");
        }
    }

    private static List<Filter> requireFilters(String what, List<Filter> filters) {
        if (filters == null || filters.isEmpty()) {
            throw new IllegalArgumentException(what + "(...) needs at least one filter");
        }
        filters.forEach(f -> Objects.requireNonNull(f, () -> "a filter of " + what + "(...)"));
        return List.copyOf(filters);
    }
}
