package dev.ferret.runtime.dialect;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Locale;

/** How a property's JSON value compares and sorts in SQL: as a number, a point in time, or its JSON text. */
public enum ValueKind {
    NUMBER, TIMESTAMP, TEXT;

    /** The kind of a property declared with {@code type}. */
    public static ValueKind ofType(Class<?> type) {
        if (type.isPrimitive()) {
            return type == boolean.class || type == char.class ? TEXT : NUMBER;
        }
        if (Number.class.isAssignableFrom(type)) {
            return NUMBER;
        }
        // JSON-B writes a ZonedDateTime with its region ([Europe/Paris]), which no engine parses: it stays text
        if (type == Instant.class || type == OffsetDateTime.class) {
            return TIMESTAMP;
        }
        return TEXT;
    }

    /** Binds {@code value} as this kind at {@code index}. */
    public void bind(PreparedStatement ps, int index, Object value) throws SQLException {
        switch (this) {
            // a page's row counts stay integers: SQL Server takes nothing else in OFFSET and FETCH
            case NUMBER -> {
                if (value instanceof Integer count) {
                    ps.setInt(index, count);
                } else {
                    ps.setBigDecimal(index, number(value));
                }
            }
            case TIMESTAMP -> ps.setObject(index, timestamp(value));
            case TEXT -> ps.setString(index, text(value));
        }
    }

    /** The value as this kind, for a check before anything runs. */
    public Object convert(Object value, String path) {
        try {
            return switch (this) {
                case NUMBER -> number(value);
                case TIMESTAMP -> timestamp(value);
                case TEXT -> text(value);
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("'" + path + "' compares as " + name().toLowerCase(Locale.ROOT)
                    + ", and " + value.getClass().getSimpleName() + " '" + value + "' is not one: " + e.getMessage(), e);
        }
    }

    private static BigDecimal number(Object value) {
        if (value instanceof BigDecimal decimal) {
            return decimal;
        }
        if (value instanceof BigInteger integer) {
            return new BigDecimal(integer);
        }
        if (value instanceof Number number) {
            return new BigDecimal(number.toString());
        }
        return new BigDecimal(value.toString());
    }

    private static OffsetDateTime timestamp(Object value) {
        if (value instanceof OffsetDateTime offset) {
            return offset;
        }
        if (value instanceof Instant instant) {
            return instant.atOffset(ZoneOffset.UTC);
        }
        if (value instanceof ZonedDateTime zoned) {
            return zoned.toOffsetDateTime();
        }
        return OffsetDateTime.parse(value.toString());
    }

    private static String text(Object value) {
        return value instanceof Enum<?> constant ? constant.name() : value.toString();
    }
}
