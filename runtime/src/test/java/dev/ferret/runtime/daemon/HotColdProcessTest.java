package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.tools.Server;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * HotCold across processes: a node in another JVM holds the shard; killing that process ends its database session
 * and its lock, and this JVM's node takes the shard over and finishes the fold with no event applied twice. On H2
 * both processes reach one database through an H2 TCP server in this JVM.
 */
@Tag("conformance")
class HotColdProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(90);

    @Test
    void killingTheProcessThatHoldsTheShardHandsItToTheOtherNode() throws Exception {
        String db = System.getProperty("ferret.test.db", "h2").toLowerCase(Locale.ROOT);
        String schema = "ft_proc_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        Server tcp = null;
        String url;
        if (db.equals("h2")) {
            tcp = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
            url = "jdbc:h2:tcp://localhost:" + tcp.getPort() + "/mem:" + schema + ";DB_CLOSE_DELAY=-1";
        } else {
            url = System.getProperty("ferret.test.url");
            assertThat(url).as("ferret.test.url").isNotBlank();
        }
        Process other = null;
        try {
            other = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), HotColdNode.class.getName(), url, schema)
                    .redirectErrorStream(true).start();
            AtomicInteger otherOwns = new AtomicInteger(-1);
            Process watched = other;
            Thread reader = new Thread(() -> {
                try (BufferedReader lines = new BufferedReader(
                        new InputStreamReader(watched.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                        if (line.startsWith("OWNS ")) {
                            otherOwns.set(Integer.parseInt(line.substring(5).trim()));
                        }
                    }
                } catch (Exception ignored) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
            await().atMost(WAIT).until(() -> otherOwns.get() == 1);

            try (DocumentStore local = Ferret.createStore(HotColdNode.options(url, schema))) {
                DaemonFixtures.appendTicks(local, "p", 20);
                await().atMost(WAIT).until(() -> local.querySession().load(Tally.class, "p")
                        .map(Tally::count).orElse(0L) == 20);
                assertThat(((AsyncDaemon) local.daemon()).ownedShards()).isEmpty();

                other.destroyForcibly().waitFor();
                await().atMost(WAIT).until(() -> ((AsyncDaemon) local.daemon()).ownedShards().size() == 1);
                DaemonFixtures.appendTicks(local, "p", 20);
                local.waitForNonStaleProjectionData(WAIT);
                assertThat(local.querySession().load(Tally.class, "p").orElseThrow().count()).isEqualTo(40);
            }
        } finally {
            if (other != null) {
                other.destroyForcibly();
            }
            if (tcp != null) {
                tcp.stop();
            } else {
                try (var admin = new com.zaxxer.hikari.HikariDataSource(poolFor(url))) {
                    TestDatabase.dropSchema(admin, db.startsWith("sqlserver") ? DatabaseEngine.SQL_SERVER
                            : DatabaseEngine.POSTGRESQL, schema);
                }
            }
        }
    }

    private static com.zaxxer.hikari.HikariConfig poolFor(String url) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(1);
        return config;
    }
}
