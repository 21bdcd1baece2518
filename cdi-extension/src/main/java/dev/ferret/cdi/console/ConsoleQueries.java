package dev.ferret.cdi.console;

import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Reads the console's shard filters and page from request parameters: {@code projection}, {@code tenant},
 * {@code database} (exact names), {@code state} (one or more states, comma-separated), {@code offset} and
 * {@code limit} (default {@value #DEFAULT_LIMIT}). A parameter that cannot be read is refused with a message naming it
 * and its value, never ignored. Stateless.
 */
final class ConsoleQueries {

    /** Rows a console page shows unless asked: enough for a screen, cheap at any number of shards. */
    static final int DEFAULT_LIMIT = 100;

    private ConsoleQueries() {
    }

    static ShardQuery shardQuery(Function<String, String> parameter) {
        ShardQuery query = ShardQuery.all().page(number(parameter, "offset", 0),
                number(parameter, "limit", DEFAULT_LIMIT));
        String projection = blankToNull(parameter.apply("projection"));
        if (projection != null) {
            query = query.projection(projection);
        }
        String tenant = blankToNull(parameter.apply("tenant"));
        if (tenant != null) {
            query = query.tenant(tenant);
        }
        String database = blankToNull(parameter.apply("database"));
        if (database != null) {
            query = query.database(database);
        }
        String states = blankToNull(parameter.apply("state"));
        if (states != null) {
            List<ShardState> wanted = new ArrayList<>();
            for (String state : states.split(",")) {
                wanted.add(state(state.trim()));
            }
            query = new ShardQuery(query.projection(), query.tenantId(), query.database(), EnumSet.copyOf(wanted),
                    query.offset(), query.limit());
        }
        return query;
    }

    private static ShardState state(String value) {
        try {
            return ShardState.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("parameter state: '" + value + "' is not a shard state; one of "
                    + EnumSet.allOf(ShardState.class));
        }
    }

    private static int number(Function<String, String> parameter, String name, int fallback) {
        String value = blankToNull(parameter.apply(name));
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("parameter " + name + ": '" + value + "' is not a whole number");
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
