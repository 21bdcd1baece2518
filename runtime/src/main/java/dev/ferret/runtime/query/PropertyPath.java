package dev.ferret.runtime.query;

import java.util.List;
import java.util.regex.Pattern;

/**
 * A validated path to a JSON property: dot-joined Java identifiers, written into statements as they are (so that an
 * index on the same expression can match), which is safe because nothing else gets through.
 *
 * @param text     as the caller wrote it
 * @param segments the property names, outermost first
 */
public record PropertyPath(String text, List<String> segments) {

    /** The most segments a path may have. */
    public static final int MAX_SEGMENTS = 8;
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

    /**
     * @throws IllegalArgumentException naming the path and the reason when it is not one
     */
    public static PropertyPath parse(String path) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("a property path must not be " + (path == null ? "null" : "empty"));
        }
        List<String> segments = List.of(path.split("\\.", -1));
        if (segments.size() > MAX_SEGMENTS) {
            throw new IllegalArgumentException("property path '" + path + "' has " + segments.size()
                    + " parts, over the limit of " + MAX_SEGMENTS);
        }
        for (String segment : segments) {
            if (!SEGMENT.matcher(segment).matches()) {
                throw new IllegalArgumentException("property path '" + path + "' is not dot-joined identifiers of"
                        + " 1-64 letters, digits or '_' (each starting with a letter or '_'): '" + segment + "'");
            }
        }
        return new PropertyPath(path, segments);
    }
}
