package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
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
        try (SharedDatabase shared = SharedDatabase.create("proc")) {
            AtomicInteger otherOwns = new AtomicInteger(-1);
            Process other = shared.startNode(HotColdNode.class, line -> {
                if (line.startsWith("OWNS ")) {
                    otherOwns.set(Integer.parseInt(line.substring(5).trim()));
                }
            });
            await().atMost(WAIT).until(() -> otherOwns.get() == 1);

            try (DocumentStore local = Ferret.createStore(HotColdNode.options(shared.url, shared.schema))) {
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
        }
    }
}
