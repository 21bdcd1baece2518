package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import dev.ferret.runtime.engines.Dialects;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

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

    /**
     * The {@code url} argument, or the default database of {@code engine}: the machine's PostgreSQL, or an in-memory
     * H2 database named {@code h2Name}.
     */
    static String url(Map<String, String> args, String engine, String h2Name) {
        String given = args.get("url");
        if (given != null) {
            return given;
        }
        return switch (engine) {
            case "h2" -> "jdbc:h2:mem:" + h2Name + ";DB_CLOSE_DELAY=-1";
            case "postgres", "postgresql" -> "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
            default -> throw new IllegalArgumentException("engine must be h2 or postgres, was: " + engine);
        };
    }

    /** A pool on {@code url} set up the way Ferret sets up a pool it opens itself. */
    static HikariConfig poolConfig(String name, String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(url);
        config.setConnectionInitSql(Dialects.connectionInitSql(url));
        config.setMaximumPoolSize(size);
        return config;
    }

    /** The database product and version behind {@code dataSource}, for the figures' heading. */
    static String engineDescription(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            DatabaseMetaData md = c.getMetaData();
            return md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
        }
    }
}
