package dev.ferret.runtime;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseException;
import dev.ferret.StoreOptions;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection pools Ferret opened itself, by database: the store's own when it is given a URL, and each tenancy
 * database given by URL, each sized by {@link ConnectionBudget}. They open together before the store is assembled
 * and close together with it; when one fails to open, those already open are closed before the failure is thrown,
 * so a store that did not start leaves no pool behind. The application's data sources are never held here.
 */
final class OwnedPools implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OwnedPools.class);

    private final Map<String, HikariDataSource> pools;

    private OwnedPools(Map<String, HikariDataSource> pools) {
        this.pools = Collections.unmodifiableMap(pools);
    }

    /**
     * Opens a pool of {@code sizes.get(database)} connections for every database in {@code sizes}, in its order:
     * the store's own at {@code mainUrl}, each tenancy database at its URL, all signing in with the store's username
     * and password.
     *
     * @throws DatabaseException naming the database and its URL (without secrets) when one cannot open
     */
    static OwnedPools open(StoreOptions options, String mainUrl, Map<String, Integer> sizes) {
        Map<String, String> urls = new LinkedHashMap<>();
        urls.put(StoreOptions.DEFAULT_DATABASE, mainUrl);
        options.tenancy().databases().forEach(database -> urls.put(database.name(), database.jdbcUrl()));
        Map<String, HikariDataSource> pools = new LinkedHashMap<>();
        try {
            sizes.forEach((database, size) -> pools.put(database, Ferret.openPool(urls.get(database),
                    options.getUsername(), options.getPassword(), describe(database, urls.get(database)),
                    poolName(database), size)));
        } catch (RuntimeException e) {
            new OwnedPools(pools).close();
            throw e;
        }
        if (!pools.isEmpty()) {
            LOG.info("Ferret opened connection pools {} (connectionBudget {})", sizes,
                    options.getConnectionBudget() == 0 ? "unset: the daemon's need + "
                            + ConnectionBudget.SESSION_HEADROOM + " each" : options.getConnectionBudget());
        }
        return new OwnedPools(pools);
    }

    /** How a database is named in messages: the store's own by its URL alone, as before tenancy databases had one. */
    private static String describe(String database, String url) {
        return StoreOptions.DEFAULT_DATABASE.equals(database) ? StoreOptions.redact(url)
                : "tenancy database '" + database + "' (" + StoreOptions.redact(url) + ")";
    }

    /** The store's own pool keeps the name it had before tenancy databases could have pools too. */
    private static String poolName(String database) {
        return StoreOptions.DEFAULT_DATABASE.equals(database) ? "ferret" : "ferret-" + database;
    }

    /** The pool of {@code database}, or null when Ferret did not open one for it. */
    HikariDataSource of(String database) {
        return pools.get(database);
    }

    /** How the store reaches {@code database}: the application's data source, or the pool opened for its URL. */
    DataSource dataSourceOf(StoreOptions.TenantDatabase database) {
        return database.dataSource() != null ? database.dataSource() : pools.get(database.name());
    }

    /** Every pool Ferret opened, by database, the store's own first. */
    Map<String, HikariDataSource> byDatabase() {
        return pools;
    }

    /** Closes every pool; one that fails to close is logged and the others still close. */
    @Override
    public void close() {
        pools.forEach((database, pool) -> {
            try {
                pool.close();
            } catch (RuntimeException e) {
                LOG.warn("Closing the connection pool of database {} failed", database, e);
            }
        });
    }
}
