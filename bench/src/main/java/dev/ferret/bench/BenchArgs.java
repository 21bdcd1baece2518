package dev.ferret.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** The harnesses' command line: space-separated {@code key=value}, an optional leading {@code --} on each. */
final class BenchArgs {

    private BenchArgs() {
    }

    static Map<String, String> parse(String[] argv) {
        Map<String, String> args = new LinkedHashMap<>();
        for (String a : argv) {
            String token = a.startsWith("--") ? a.substring(2) : a;
            int eq = token.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("arguments are key=value, got: " + a);
            }
            args.put(token.substring(0, eq), token.substring(eq + 1));
        }
        return args;
    }
}
