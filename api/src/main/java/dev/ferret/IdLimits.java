package dev.ferret;

/**
 * How long the ids Ferret stores may be. These are the widths of the id columns in every engine's schema (the
 * dialects render their DDL from these constants), and every public entry point that takes an id checks it here
 * before anything is written or queried: a longer id would be refused by one engine at commit and cut to the column
 * width by another, where two ids that differ only past the limit would then overwrite each other.
 *
 * <p>An id must not end with a space (U+0020): SQL Server pads the shorter string with spaces before it
 * compares two, whatever the collation, so {@code "a"} and {@code "a "} would be one key there and two elsewhere.
 * Refused on every engine, ids mean the same everywhere; other trailing characters (tab, no-break space) compare
 * as themselves on every engine.
 *
 * <p>An id must not hold control characters other than the tab (NUL, CR, LF, ...: PostgreSQL refuses NUL, and a
 * line break forges log lines) nor a lone surrogate (an engine that stores UTF-8 turns it into {@code ?}, so two ids would become one).
 *
 * <p>Lengths count UTF-16 code units ({@link String#length()}), which is what SQL Server's {@code NVARCHAR(n)}
 * counts; PostgreSQL and H2 count code points, never more, so an id that passes fits every engine.
 */
public final class IdLimits {

    /** The longest stream id and document id, in characters: the width of the {@code id} and {@code stream_id} columns. */
    public static final int MAX_ID_LENGTH = 250;

    /** The longest tenant id, in characters: the width of the {@code tenant_id} columns. */
    public static final int MAX_TENANT_ID_LENGTH = 100;

    /** How much of an over-long id a message quotes: enough to recognise it, never a whole huge one. */
    private static final int QUOTED_PREFIX = 40;

    private IdLimits() {
    }

    /**
     * Checks a stream id: not blank, at most {@link #MAX_ID_LENGTH} characters, no trailing space.
     *
     * @throws IllegalArgumentException naming the length and the limit otherwise
     */
    public static String requireStreamId(String streamId) {
        return require("stream id", streamId, MAX_ID_LENGTH, true);
    }

    /**
     * Checks the stored form of a document id of {@code documentType}: at most {@link #MAX_ID_LENGTH} characters, no
     * trailing space.
     *
     * @throws IllegalArgumentException naming the document type, the length and the limit otherwise
     */
    public static String requireDocumentId(Class<?> documentType, String id) {
        return require("id of document type " + documentType.getName(), id, MAX_ID_LENGTH, false);
    }

    /**
     * Checks a tenant id: not blank, at most {@link #MAX_TENANT_ID_LENGTH} characters, no trailing space.
     *
     * @throws IllegalArgumentException naming the length and the limit otherwise
     */
    public static String requireTenantId(String tenantId) {
        return require("tenant id", tenantId, MAX_TENANT_ID_LENGTH, true);
    }

    /** The reason {@code tenantId} is not a valid tenant id, or null when it is one. */
    /** Checks a correlation id looked up: as a stream id, under its own name in the message. */
    public static String requireCorrelationId(String correlationId) {
        return require("correlation id", correlationId, MAX_ID_LENGTH, true);
    }

    /** Checks an optional id of event metadata: null, or as a stream id. */
    static String requireOptionalId(String kind, String id) {
        return id == null ? null : require(kind, id, MAX_ID_LENGTH, true);
    }

    static String tenantIdProblem(String tenantId) {
        return problem("tenant id", tenantId, MAX_TENANT_ID_LENGTH, true);
    }

    private static String require(String kind, String id, int limit, boolean nonBlank) {
        String problem = problem(kind, id, limit, nonBlank);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return id;
    }

    private static String problem(String kind, String id, int limit, boolean nonBlank) {
        if (id == null) {
            return kind + " must not be null";
        }
        if (nonBlank && id.isBlank()) {
            return kind + " must not be blank, was: '" + id + "'";
        }
        if (id.length() > limit) {
            return kind + " is " + id.length() + " characters long, over the limit of " + limit + ": '"
                    + id.substring(0, QUOTED_PREFIX) + "...'";
        }
        if (id.endsWith(" ")) {
            return kind + " must not end with a space, was: '" + id + "' (SQL Server compares strings padded"
                    + " with spaces, so it would be the same id as the one without them)";
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (refusedControl(c)) {
                return kind + " must not hold control characters, was: '" + printable(id) + "' (U+"
                        + String.format("%04X", (int) c) + " at index " + i + "; PostgreSQL refuses NUL, and a line"
                        + " break in an id forges log lines)";
            }
            boolean paired = Character.isHighSurrogate(c) && i + 1 < id.length()
                    && Character.isLowSurrogate(id.charAt(i + 1));
            if (paired) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return kind + " must not hold a lone surrogate, was: '" + printable(id) + "' (U+"
                        + String.format("%04X", (int) c) + " at index " + i + "; engines that store UTF-8 turn it"
                        + " into '?', so two ids would become one)";
            }
        }
        return null;
    }

    /**
     * NUL, line breaks and the other control characters, except the tab (an id of its own on every engine):
     * C0, DEL, C1 (NEL among them) and the Unicode line and paragraph separators.
     */
    private static boolean refusedControl(char c) {
        return c != '\t' && Character.isISOControl(c) || c == '\u2028' || c == '\u2029';
    }

    /** {@code id} for a message: control characters and lone surrogates as escapes, at most a prefix. */
    private static String printable(String id) {
        StringBuilder out = new StringBuilder();
        String shown = id.length() > QUOTED_PREFIX ? id.substring(0, QUOTED_PREFIX) : id;
        for (int i = 0; i < shown.length(); i++) {
            char c = shown.charAt(i);
            if (refusedControl(c) || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        return id.length() > QUOTED_PREFIX ? out + "..." : out.toString();
    }
}
