package dev.ferret.runtime.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The database a conformance test runs on, chosen by the system property {@code ferret.test.db} (h2, postgres,
 * sqlserver) with {@code ferret.test.url}. Each instance owns a fresh schema (and, on H2, a fresh in-memory
 * database) that {@link #close()} drops. A server that cannot be reached fails the test: nothing is skipped.
 */
public final class TestDatabase implements AutoCloseable {

    private final DatabaseEngine engine;
    private final String url;
    private final String schema;
    private final HikariDataSource dataSource;
    /** For a {@link #sibling}: drops the whole database it created, on the parent's connection. */
    private Runnable dropDatabase = () -> { };

    private TestDatabase(DatabaseEngine engine, String url, String schema) {
        this.engine = engine;
        this.url = url;
        this.schema = schema;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(12);
        config.setPoolName("test-" + schema);
        if (engine == DatabaseEngine.POSTGRESQL) {
            // lets a test find and kill exactly this database's sessions
            config.addDataSourceProperty("ApplicationName", schema);
        }
        this.dataSource = new HikariDataSource(config);
    }

    /** A fresh schema on the configured engine; {@code label} keeps names readable in the server's catalog. */
    public static TestDatabase create(String label) {
        String db = System.getProperty("ferret.test.db", "h2").toLowerCase(Locale.ROOT);
        String unique = label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "")
                + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        if (unique.length() > 40) {
            unique = unique.substring(unique.length() - 40);
        }
        String schema = "ft_" + unique;
        return switch (db) {
            case "h2" -> new TestDatabase(DatabaseEngine.H2, "jdbc:h2:mem:" + schema + ";DB_CLOSE_DELAY=-1", schema);
            case "postgres", "postgresql" -> new TestDatabase(DatabaseEngine.POSTGRESQL, requireUrl(db), schema);
            case "sqlserver" -> new TestDatabase(DatabaseEngine.SQL_SERVER, requireUrl(db), schema);
            default -> throw new IllegalStateException("ferret.test.db must be h2, postgres or sqlserver, was: " + db);
        };
    }

    private static String requireUrl(String db) {
        String url = configuredUrl();
        if (url.isBlank()) {
            throw new IllegalStateException("ferret.test.db=" + db + " needs ferret.test.url (for SQL Server pass"
                    + " -Dsqlserver.url=jdbc:sqlserver://..., or run -Psqlserver-container); refusing to skip the"
                    + " conformance suite");
        }
        return url;
    }

    /**
     * {@code ferret.test.url}; for {@code testcontainers}, the URL of the SQL Server container it starts. Blank
     * when not set.
     */
    public static String configuredUrl() {
        String url = System.getProperty("ferret.test.url", "");
        return SqlServerTestContainer.MARKER.equals(url) ? SqlServerTestContainer.url() : url;
    }

    public DatabaseEngine engine() {
        return engine;
    }

    /**
     * Another database on the same server with a schema of the same name: where tenants mapped to a second
     * database live. Closing it drops the database.
     */
    public TestDatabase sibling(String label) {
        String name = (schema + "_" + label).toLowerCase(Locale.ROOT);
        return switch (engine) {
            case H2 -> new TestDatabase(engine, "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", schema);
            case POSTGRESQL -> {
                execute("CREATE DATABASE " + name);
                TestDatabase sibling = new TestDatabase(engine, url.replaceFirst("/[^/?;]+(\\?|$)", "/" + name + "$1"),
                        schema);
                sibling.dropDatabase = () -> execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
                yield sibling;
            }
            case SQL_SERVER -> {
                execute("CREATE DATABASE " + name);
                TestDatabase sibling = new TestDatabase(engine, url + ";databaseName=" + name, schema);
                sibling.dropDatabase = () -> execute("ALTER DATABASE " + name
                        + " SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE " + name);
                yield sibling;
            }
        };
    }

    /** The JDBC URL the tests connect with. */
    public String url() {
        return url;
    }

    public String schema() {
        return schema;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    private final java.util.List<HikariDataSource> extraPools = new java.util.ArrayList<>();

    /** Another pool on the same database: a second node's own connections. Closed with this database. */
    public DataSource newPool(String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(8);
        config.setPoolName(name + "-" + schema);
        if (engine == DatabaseEngine.POSTGRESQL) {
            config.addDataSourceProperty("ApplicationName", schema);
        }
        HikariDataSource pool = new HikariDataSource(config);
        extraPools.add(pool);
        return pool;
    }

    /** Ends one server session: {@code pg_terminate_backend} on PostgreSQL, {@code ABORT_SESSION} on H2. */
    public void killSession(long sessionId) {
        switch (engine) {
            case POSTGRESQL -> queryLong("SELECT count(pg_terminate_backend(" + sessionId + "))");
            case H2 -> execute("CALL ABORT_SESSION(" + sessionId + ")");
            case SQL_SERVER -> execute("KILL " + sessionId);
        }
    }

    /** Options pointing at this database and schema, applying the schema on startup. */
    public StoreOptions options() {
        return new StoreOptions().dataSource(dataSource).schema(schema).applyAllDatabaseChangesOnStartup(true);
    }

    /** Runs one statement outside any store, for setting up situations. */
    public void execute(String sql) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** The first column of the first row of {@code sql}, as a long. */
    public long queryLong(String sql) {
        return queryFirst(sql, rs -> rs.getLong(1));
    }

    /** The first column of the first row of {@code sql}, as text. */
    public String queryString(String sql) {
        return queryFirst(sql, rs -> rs.getString(1));
    }

    /** Reads one value from the current row. */
    @FunctionalInterface
    private interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> T queryFirst(String sql, RowReader<T> reader) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return reader.read(rs);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Drops the pool's connections, as a pool does after a database restart, so killed ones are not lent again. */
    public void evictPooledConnections() {
        dataSource.getHikariPoolMXBean().softEvictConnections();
    }

    /** Terminates every server session of this test's pool (PostgreSQL); returns how many. */
    public long terminateSessions() {
        if (engine != DatabaseEngine.POSTGRESQL) {
            throw new IllegalStateException("session kills need PostgreSQL");
        }
        return queryLong("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '"
                + schema + "' AND pid <> pg_backend_pid()");
    }

    /** The table {@code local} (such as {@code pc_events}) qualified with this schema. */
    /** The lower-cased names of the indexes of {@code table} in this schema, read through JDBC's metadata. */
    public List<String> indexesOf(String table) {
        boolean upper = engine() == DatabaseEngine.H2;
        List<String> names = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
             ResultSet rs = c.getMetaData().getIndexInfo(null, upper ? schema().toUpperCase(Locale.ROOT) : schema(),
                     upper ? table.toUpperCase(Locale.ROOT) : table, false, false)) {
            while (rs.next()) {
                if (rs.getString("INDEX_NAME") != null) {
                    names.add(rs.getString("INDEX_NAME").toLowerCase(Locale.ROOT));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("reading the indexes of " + table + ": " + e.getMessage(), e);
        }
        return names;
    }

    public String table(String local) {
        return schema + "." + local;
    }

    @Override
    public void close() {
        try {
            switch (engine) {
                // on a fresh connection: a test may have killed sessions whose connections went back to the pool
                case H2 -> dropAllH2();
                case POSTGRESQL, SQL_SERVER -> dropSchema(dataSource, engine, schema);
            }
        } finally {
            extraPools.forEach(HikariDataSource::close);
            dataSource.close();
            dropDatabase.run();
        }
    }

    private void dropAllH2() {
        try (Connection c = java.sql.DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP ALL OBJECTS");
        } catch (SQLException e) {
            throw new IllegalStateException("DROP ALL OBJECTS", e);
        }
    }

    /**
     * Drops {@code schema} and everything in it, in statements valid on {@code engine}: PostgreSQL's
     * {@code DROP SCHEMA ... CASCADE}; on SQL Server, which has no CASCADE, each table and then the schema.
     */
    public static void dropSchema(DataSource dataSource, DatabaseEngine engine, String schema) {
        List<String> drops = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            switch (engine) {
                case POSTGRESQL -> drops.add("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                case SQL_SERVER -> {
                    try (ResultSet rs = s.executeQuery("SELECT name FROM sys.tables WHERE schema_id = SCHEMA_ID('"
                            + schema + "')")) {
                        while (rs.next()) {
                            drops.add("DROP TABLE " + schema + "." + rs.getString(1));
                        }
                    }
                    drops.add("IF SCHEMA_ID('" + schema + "') IS NOT NULL DROP SCHEMA " + schema);
                }
                case H2 -> drops.add("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
            for (String drop : drops) {
                s.execute(drop);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("dropping schema " + schema + " (" + drops + ")", e);
        }
    }

    @Override
    public String toString() {
        return engine + " " + StoreOptions.redact(url) + " schema " + schema;
    }
}
