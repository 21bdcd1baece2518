package dev.ferret.runtime.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.MSSQLServerContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * SQL Server for the conformance suite when {@code ferret.test.url=testcontainers} ({@code -Psqlserver-container}):
 * the official image, started once per test JVM and stopped with it, with a database of its own whose
 * READ_COMMITTED_SNAPSHOT is {@code ferret.test.sqlserver.rcsi} and a case-insensitive server collation
 * ({@code ferret.test.sqlserver.collation}), as most production servers have. Without a container runtime it throws
 * naming what to do: the suite fails, it is never skipped.
 */
final class SqlServerTestContainer {

    /** The marker value of {@code ferret.test.url} that asks for a container. */
    static final String MARKER = "testcontainers";
    private static final String IMAGE = System.getProperty("ferret.test.sqlserver.image",
            "mcr.microsoft.com/mssql/server:2022-latest");
    private static final String DATABASE = "ferret_test";

    // guarded by the class: started at most once per JVM
    private static MSSQLServerContainer<?> container;
    private static String url;

    private SqlServerTestContainer() {
    }

    static synchronized String url() {
        if (url != null) {
            return url;
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new IllegalStateException("ferret.test.url=" + MARKER + " (-Psqlserver-container) starts SQL Server"
                    + " in a container, but no container runtime (Docker, Podman) answers on this machine: start one,"
                    + " or run -Psqlserver -Dsqlserver.url=jdbc:sqlserver://... against a server you have."
                    + " Refusing to skip the conformance suite");
        }
        boolean rcsi = Boolean.parseBoolean(System.getProperty("ferret.test.sqlserver.rcsi", "false"));
        String collation = System.getProperty("ferret.test.sqlserver.collation", "SQL_Latin1_General_CP1_CI_AS");
        MSSQLServerContainer<?> started = new MSSQLServerContainer<>(DockerImageName.parse(IMAGE)
                .asCompatibleSubstituteFor("mcr.microsoft.com/mssql/server"))
                .acceptLicense()
                .withEnv("MSSQL_COLLATION", collation);
        started.start();
        try (Connection c = DriverManager.getConnection(started.getJdbcUrl(), started.getUsername(),
                started.getPassword());
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
            s.execute("ALTER DATABASE " + DATABASE + " SET READ_COMMITTED_SNAPSHOT " + (rcsi ? "ON" : "OFF")
                    + " WITH ROLLBACK IMMEDIATE");
        } catch (SQLException e) {
            started.stop();
            throw new IllegalStateException("preparing the test database in the SQL Server container failed: " + e, e);
        }
        container = started;
        url = started.getJdbcUrl() + ";databaseName=" + DATABASE + ";user=" + started.getUsername() + ";password="
                + started.getPassword();
        return url;
    }
}
