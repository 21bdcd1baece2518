package dev.ferret.runtime.daemon;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseEngine;
import dev.ferret.runtime.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Consumer;
import org.h2.tools.Server;

/**
 * One database that this JVM and child JVMs running daemon nodes reach together: on H2 an in-memory database behind
 * a TCP server in this JVM, on a server engine a fresh schema of the configured database. Closing it kills the child
 * nodes still running and drops what it created.
 */
final class SharedDatabase implements AutoCloseable {

    final String url;
    final String schema;
    private final Server tcp;
    private final List<Process> nodes = new ArrayList<>();

    private SharedDatabase(String url, String schema, Server tcp) {
        this.url = url;
        this.schema = schema;
        this.tcp = tcp;
    }

    static SharedDatabase create(String label) throws SQLException {
        String db = System.getProperty("ferret.test.db", "h2").toLowerCase(Locale.ROOT);
        String schema = "ft_" + label + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        if (db.equals("h2")) {
            Server tcp = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
            return new SharedDatabase("jdbc:h2:tcp://localhost:" + tcp.getPort() + "/mem:" + schema
                    + ";DB_CLOSE_DELAY=-1", schema, tcp);
        }
        String url = TestDatabase.configuredUrl();
        if (url.isBlank()) {
            throw new IllegalStateException("ferret.test.db=" + db + " needs ferret.test.url; refusing to skip");
        }
        return new SharedDatabase(url, schema, null);
    }

    /**
     * Starts {@code main} in a child JVM with this test's class path and {@code url schema args...}; each line it
     * prints goes to {@code lines}, on a reader thread that ends with the process.
     */
    Process startNode(Class<?> main, Consumer<String> lines, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", System.getProperty("java.class.path"), main.getName(), url, schema));
        command.addAll(List.of(args));
        Process node = new ProcessBuilder(command).redirectErrorStream(true).start();
        nodes.add(node);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.accept(line);
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "node-output-" + main.getSimpleName());
        reader.setDaemon(true);
        reader.start();
        return node;
    }

    @Override
    public void close() {
        nodes.forEach(Process::destroyForcibly);
        if (tcp != null) {
            tcp.stop();
            return;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(1);
        try (HikariDataSource admin = new HikariDataSource(config)) {
            TestDatabase.dropSchema(admin, url.startsWith("jdbc:sqlserver:") ? DatabaseEngine.SQL_SERVER
                    : DatabaseEngine.POSTGRESQL, schema);
        }
    }
}
