package dev.ferret.runtime.engines;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.h2.H2Dialect;
import dev.ferret.runtime.dialect.postgresql.PostgresDialect;
import dev.ferret.runtime.dialect.sqlserver.SqlServerDialect;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Picks the dialect for an engine, or detects the engine from connection metadata. Kept out of {@code dialect}, which
 * the engine packages depend on, so that no package cycle runs between them.
 */
public final class Dialects {

    private Dialects() {
    }

    /** The engine's dialect with the default store settings. */
    public static Dialect of(DatabaseEngine engine) {
        return of(engine, StoreOptions.DEFAULT_APPEND_LOCK_TIMEOUT);
    }

    /** The engine's dialect for a store whose appends wait up to {@code appendLockTimeout} for a tenant's row. */
    public static Dialect of(DatabaseEngine engine, Duration appendLockTimeout) {
        return switch (engine) {
            case SQL_SERVER -> new SqlServerDialect();
            case POSTGRESQL -> new PostgresDialect();
            case H2 -> new H2Dialect(appendLockTimeout);
        };
    }

    /**
     * What a pool opened on {@code jdbcUrl} runs on each new connection, or null for nothing: on PostgreSQL, plans
     * made with each statement's parameters ({@link PostgresDialect#CUSTOM_PLANS}). For pools Ferret opens itself, and
     * for any pool that should behave like them.
     */
    public static String connectionInitSql(String jdbcUrl) {
        return isPostgresql(jdbcUrl) ? PostgresDialect.CUSTOM_PLANS : null;
    }

    /**
     * Whether {@code jdbcUrl} is PostgreSQL's driver's, read from its prefix: what a pool is set up for before it
     * has connected and the metadata can say.
     */
    public static boolean isPostgresql(String jdbcUrl) {
        return jdbcUrl.startsWith("jdbc:postgresql:");
    }

    public static DatabaseEngine detect(DatabaseMetaData metaData) throws SQLException {
        String product = metaData.getDatabaseProductName();
        if (product.startsWith("Microsoft SQL Server")) {
            return DatabaseEngine.SQL_SERVER;
        }
        if (product.equals("PostgreSQL")) {
            return DatabaseEngine.POSTGRESQL;
        }
        if (product.equals("H2")) {
            return DatabaseEngine.H2;
        }
        throw new ConfigurationException("database '" + product + "' at " + StoreOptions.redact(metaData.getURL())
                + " is not supported; Ferret runs on SQL Server, PostgreSQL and H2");
    }
}
