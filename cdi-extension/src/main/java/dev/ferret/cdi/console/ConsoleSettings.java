package dev.ferret.cdi.console;

import dev.ferret.cdi.FerretSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The console's keys ({@link FerretSettings#CONSOLE_ENABLED} and the four after it), read and checked; plain Java.
 *
 * @param enabled      whether the console is served
 * @param path         where, within the application: segments of letters, digits, {@code .}, {@code _} and
 *                     {@code -}, with a leading slash and none at the end
 * @param operatorRole the role that sees the console and runs its actions
 * @param viewerRole   the role that only sees it
 * @param confidential whether the container must serve it over HTTPS only (the servlet's transport guarantee)
 */
public record ConsoleSettings(boolean enabled, String path, String operatorRole, String viewerRole,
                              boolean confidential) {

    public static final String DEFAULT_PATH = "/ferret-console";
    public static final String DEFAULT_OPERATOR_ROLE = "ferret-operator";
    public static final String DEFAULT_VIEWER_ROLE = "ferret-viewer";

    private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9._-]+)+");
    private static final Pattern ROLE = Pattern.compile("[A-Za-z0-9._-]{1,100}");

    /**
     * The settings as read, or each refused value named with its key.
     *
     * @param problems empty when {@code settings} holds
     */
    public record Read(ConsoleSettings settings, List<String> problems) {
    }

    /** Reads the keys through {@code lookup}; never throws on a bad value, which is reported instead. */
    public static Read read(Function<String, Optional<String>> lookup) {
        List<String> problems = new ArrayList<>();
        boolean enabled = either(lookup, FerretSettings.CONSOLE_ENABLED, "true", "false", false, problems);
        String path = lookup.apply(FerretSettings.CONSOLE_PATH.name()).map(String::trim).orElse(DEFAULT_PATH);
        if (!PATH.matcher(path).matches() || path.contains("/./") || path.contains("/../") || path.endsWith("/.")
                || path.endsWith("/..")) {
            problems.add(refused(FerretSettings.CONSOLE_PATH, path, "a path such as /ferret-console: segments of"
                    + " letters, digits, '.', '_' and '-', a leading slash and none at the end"));
        }
        String operator = role(lookup, FerretSettings.CONSOLE_OPERATOR_ROLE, DEFAULT_OPERATOR_ROLE, problems);
        String viewer = role(lookup, FerretSettings.CONSOLE_VIEWER_ROLE, DEFAULT_VIEWER_ROLE, problems);
        boolean confidential = either(lookup, FerretSettings.CONSOLE_TRANSPORT_GUARANTEE, "confidential", "none",
                true, problems);
        return new Read(new ConsoleSettings(enabled, path, operator, viewer, confidential), List.copyOf(problems));
    }

    /** A key of two words, in any case: true for {@code yes}, false for {@code no}; another is a problem. */
    private static boolean either(Function<String, Optional<String>> lookup, FerretSettings.Key key, String yes,
                                  String no, boolean fallback, List<String> problems) {
        Optional<String> given = lookup.apply(key.name()).map(String::trim);
        if (given.isEmpty()) {
            return fallback;
        }
        String value = given.get().toLowerCase(Locale.ROOT);
        if (!value.equals(yes) && !value.equals(no)) {
            problems.add(refused(key, given.get(), yes + " or " + no));
            return fallback;
        }
        return value.equals(yes);
    }

    private static String role(Function<String, Optional<String>> lookup, FerretSettings.Key key, String fallback,
                               List<String> problems) {
        String role = lookup.apply(key.name()).map(String::trim).orElse(fallback);
        if (!ROLE.matcher(role).matches()) {
            problems.add(refused(key, role, "a role name of letters, digits, '.', '_' and '-' (at most 100)"));
        }
        return role;
    }

    private static String refused(FerretSettings.Key key, String value, String expected) {
        return "Ferret configuration: " + key.name() + "='" + value + "' is not valid: expected " + expected;
    }
}
