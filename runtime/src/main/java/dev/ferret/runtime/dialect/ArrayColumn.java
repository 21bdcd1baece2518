package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * One column of the rows an {@code ...OfMany} statement takes, bound by {@link Dialect#bindColumns}: the name the
 * statement reads it by (a JSON property on SQL Server), the SQL element type of the array that carries it where the
 * engine takes arrays ({@code varchar}, {@code text} or {@code bigint}), and its values in row order, null where a
 * row has none.
 */
public record ArrayColumn(String name, String elementType, List<?> values) {
}
