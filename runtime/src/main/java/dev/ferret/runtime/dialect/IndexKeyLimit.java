package dev.ferret.runtime.dialect;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

/**
 * How large a document index key may be on an engine, so that a value past it is refused before anything is written,
 * naming the index, instead of failing inside the engine (or, for a number past the indexed type, being indexed as
 * NULL and escaping a unique index).
 *
 * @param engine        the engine's name, for the error
 * @param maxBytes      the most bytes of key data one index entry may hold
 * @param utf16         whether text is stored as UTF-16 (2 bytes a code unit) rather than UTF-8
 * @param numberBytes   what a number key takes
 * @param instantBytes  what a point-in-time key takes
 * @param numberBound   numbers whose magnitude reaches this are not indexable; null when every number is
 */
public record IndexKeyLimit(String engine, int maxBytes, boolean utf16, int numberBytes, int instantBytes,
                            BigDecimal numberBound) {

    /** An engine whose index keys no JSON value can outgrow. */
    public static final IndexKeyLimit NONE = new IndexKeyLimit("", Integer.MAX_VALUE, false, 0, 0, null);

    public boolean limited() {
        return maxBytes != Integer.MAX_VALUE || numberBound != null;
    }

    /** The bytes {@code text} takes in an index key here. */
    public int textBytes(String text) {
        return utf16 ? 2 * text.length() : text.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The bytes a key part of {@code kind} takes whatever its value; text is counted by {@link #textBytes}. */
    public int fixedBytes(ValueKind kind) {
        return switch (kind) {
            case NUMBER -> numberBytes;
            case TIMESTAMP -> instantBytes;
            case TEXT -> 0;
        };
    }

    /** Whether {@code number} can be an index key here. */
    public boolean fits(BigDecimal number) {
        return numberBound == null || number.abs().compareTo(numberBound) < 0;
    }
}
