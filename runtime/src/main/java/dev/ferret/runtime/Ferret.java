package dev.ferret.runtime;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DatabaseException;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.engines.Dialects;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import javax.sql.DataSource;

/** Builds {@link DocumentStore}s in plain Java SE. */
public final class Ferret {

    /** The embedded database used when neither a data source nor a URL is configured. */
    public static final String DEFAULT_H2_URL = "jdbc:h2:mem:ferret;DB_CLOSE_DELAY=-1";

    private Ferret() {
    }

    /** Configures and builds a store. */
    public static DocumentStore createStore(Consumer<StoreOptions> configure) {
        StoreOptions options = new StoreOptions();
        configure.accept(options);
        return createStore(options);
    }

    /**
     * Builds a store: connects, detects the engine, then applies or verifies the schema.
     *
     * @throws DatabaseException naming the URL (without password) when the database cannot be reached
     */
    public static DocumentStore createStore(StoreOptions options) {
        return createStore(options, StoreSeams.defaults());
    }

    /**
     * Builds a store with the host's clock, transactions and executors. The pools Ferret opens (for the store's own
     * URL and each tenancy database's) are sized first, by {@link ConnectionBudget}, so a budget that is too small
     * fails before Ferret opens any pool.
     */
    public static DocumentStore createStore(StoreOptions options, StoreSeams seams) {
        DataSource given = options.getDataSource();
        String mainUrl = given != null ? null
                : options.getConnectionUrl() == null ? DEFAULT_H2_URL : options.getConnectionUrl();
        DatabaseEngine engine = options.getEngine();
        if (engine == null && given != null) {
            engine = detect(given, describe(given));
        }
        // a pool is sized before it connects: the engine of a URL is read from its prefix, as its init SQL is
        boolean listensForCommits = options.daemon().isCommitSignals()
                && (engine != null ? engine == DatabaseEngine.POSTGRESQL : Dialects.isPostgresql(mainUrl));
        OwnedPools pools = OwnedPools.open(options, mainUrl, ConnectionBudget.poolSizes(options, listensForCommits));
        try {
            DataSource dataSource = given != null ? given : pools.of(StoreOptions.DEFAULT_DATABASE);
            if (engine == null) {
                engine = detect(dataSource, StoreOptions.redact(mainUrl));
            }
            for (StoreOptions.TenantDatabase database : options.tenancy().databases()) {
                DataSource reach = pools.dataSourceOf(database);
                requireEngine(engine, reach, "tenancy database '" + database.name() + "' (" + describe(reach) + ")");
            }
            Map<String, DataSource> replicas = new LinkedHashMap<>(options.tenancy().replicas());
            if (options.getReplica() != null) {
                replicas.put(StoreOptions.DEFAULT_DATABASE, options.getReplica());
            }
            for (Map.Entry<String, DataSource> replica : replicas.entrySet()) {
                requireEngine(engine, replica.getValue(), "the replica of database '" + replica.getKey() + "' ("
                        + describe(replica.getValue()) + ")");
            }
            return StoreAssembly.assemble(options, dataSource, pools,
                    Dialects.of(engine, options.events().getAppendLockTimeout()), seams);
        } catch (RuntimeException e) {
            pools.close();
            throw e;
        }
    }

    /** Connects to {@code dataSource} and checks it runs {@code engine}, as every database of a store must. */
    private static void requireEngine(DatabaseEngine engine, DataSource dataSource, String where) {
        DatabaseEngine other = detect(dataSource, where);
        if (other != engine) {
            throw new ConfigurationException(where + " runs " + other + " but the store's own database runs "
                    + engine + "; every database of a store, and every replica, must run the same engine");
        }
    }

    /**
     * Every statement schema apply would run for {@code options} on an empty database of {@code engine}, in order,
     * without connecting to anything: the DDL a DBA reviews (or runs) before a store with
     * {@code applyAllDatabaseChangesOnStartup(false)} verifies it. Tenancy databases get the same statements.
     *
     * @throws ConfigurationException as {@link #createStore} would for the same options (a reserved schema name, an
     *                                index path that is not a property)
     */
    public static List<String> schemaStatements(StoreOptions options, DatabaseEngine engine) {
        return List.copyOf(SchemaScript.statements(options, engine));
    }

    /** {@link #schemaStatements} as one script: {@code GO} after each batch on SQL Server, {@code ;} elsewhere. */
    public static String schemaScript(StoreOptions options, DatabaseEngine engine) {
        return SchemaScript.render(SchemaScript.statements(options, engine), engine);
    }

    /**
     * Opens a pool of at most {@code maximumPoolSize} connections on {@code url}, named {@code poolName} in the pool's
     * logs and metrics.
     *
     * @throws DatabaseException naming {@code description} (which must hold no secret) when it cannot connect
     */
    static HikariDataSource openPool(String url, String username, String password, String description,
                                     String poolName, int maximumPoolSize) {
        if (url.startsWith("jdbc:h2:") && !onClassPath("org.h2.Driver")) {
            throw new ConfigurationException("cannot open " + description + ": embedded H2 is the database when"
                    + " nothing is configured, and it is not on the class path. Add com.h2database:h2, or configure"
                    + " a data source or a connection URL (StoreOptions.dataSource / connection)");
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName(poolName);
        config.setMaximumPoolSize(maximumPoolSize);
        config.setJdbcUrl(url);
        config.setUsername(username);
        config.setPassword(password);
        config.setConnectionInitSql(Dialects.connectionInitSql(url));
        try {
            return new HikariDataSource(config);
        } catch (HikariPool.PoolInitializationException | IllegalArgumentException | IllegalStateException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new DatabaseException("cannot connect to " + description + " (" + engineHint(description) + "): "
                    + cause.getMessage(), e);
        }
    }

    private static boolean onClassPath(String className) {
        try {
            Class.forName(className, false, Ferret.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static DatabaseEngine detect(DataSource dataSource, String description) {
        try (Connection connection = dataSource.getConnection()) {
            return Dialects.detect(connection.getMetaData());
        } catch (SQLException e) {
            throw new DatabaseException("cannot connect to " + description + " (" + engineHint(description) + "): "
                    + e.getMessage(), e);
        }
    }

    /** The data source's URL where it exposes one (without password), else its class. */
    static String describe(DataSource dataSource) {
        for (String getter : new String[] {"getJdbcUrl", "getUrl", "getURL"}) {
            try {
                Method method = dataSource.getClass().getMethod(getter);
                Object url = method.invoke(dataSource);
                if (url != null) {
                    return StoreOptions.redact(url.toString());
                }
            } catch (ReflectiveOperationException | RuntimeException ignored) {
                // not this shape of data source
            }
        }
        return "data source " + dataSource.getClass().getName();
    }

    private static String engineHint(String description) {
        if (description.contains("jdbc:sqlserver:")) {
            return "SQL Server";
        }
        if (description.contains("jdbc:postgresql:")) {
            return "PostgreSQL";
        }
        if (description.contains("jdbc:h2:")) {
            return "H2";
        }
        return "engine unknown until connected";
    }
}
