package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.ArrayColumn;
import java.util.List;

/**
 * The rows of an {@code ...OfMany} statement as the one JSON parameter SQL Server's {@code OPENJSON} reads: an array
 * with one object per row, each column a property named as the statement's {@code WITH} clause names it. mssql-jdbc
 * takes no array parameter, and a table-valued parameter needs a table type created in the schema; text in a JSON
 * string comes back from {@code OPENJSON} exactly as it went in, whatever its length, so ids, event data and headers
 * travel as strings (an event's JSON is not re-parsed or reformatted), numbers as JSON numbers, nulls as
 * {@code null}.
 */
final class JsonRows {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonRows() {
    }

    /**
     * The rows of {@code columns}, which must be equally long and hold only strings, longs and nulls: the
     * {@code ...OfMany} statements bind their timestamps as parameters of their own, so none is ever written here.
     */
    static String of(List<ArrayColumn> columns) {
        int rows = columns.isEmpty() ? 0 : columns.get(0).values().size();
        for (ArrayColumn column : columns) {
            if (column.values().size() != rows) {
                throw new IllegalArgumentException("column " + column.name() + " has " + column.values().size()
                        + " values, column " + columns.get(0).name() + " " + rows + ": the rows must line up");
            }
        }
        StringBuilder json = new StringBuilder(2 + 128 * rows).append('[');
        for (int row = 0; row < rows; row++) {
            json.append(row == 0 ? "{" : ",{");
            for (int c = 0; c < columns.size(); c++) {
                ArrayColumn column = columns.get(c);
                if (c > 0) {
                    json.append(',');
                }
                appendString(json, column.name());
                json.append(':');
                appendValue(json, column, column.values().get(row));
            }
            json.append('}');
        }
        return json.append(']').toString();
    }

    private static void appendValue(StringBuilder json, ArrayColumn column, Object value) {
        if (value == null) {
            json.append("null");
        } else if (value instanceof String text) {
            appendString(json, text);
        } else if (value instanceof Long || value instanceof Integer) {
            json.append(value);
        } else {
            throw new IllegalArgumentException("column " + column.name() + " holds a " + value.getClass().getName()
                    + "; a JSON row parameter carries only strings, longs and nulls");
        }
    }

    /**
     * {@code value} as a JSON string: quote, backslash and the control characters below U+0020 escaped (RFC 8259
     * requires no more); every other UTF-16 unit, surrogates included, as it is, since the parameter is nvarchar.
     */
    static void appendString(StringBuilder json, String value) {
        json.append('"');
        // runs of characters that need no escape are copied whole: an event's JSON is mostly such runs
        int run = 0;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            json.append(value, run, i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> json.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
            run = i + 1;
        }
        json.append(value, run, value.length()).append('"');
    }
}
