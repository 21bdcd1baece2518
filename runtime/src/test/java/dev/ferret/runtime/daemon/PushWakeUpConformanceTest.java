package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An append that commits in this JVM wakes the detector at once: with a polling interval far longer than the test
 * waits, the appended events still reach the projection. On PostgreSQL an append on another node does too (LISTEN/
 * NOTIFY after its commit), also after the listening connection was killed; elsewhere polling is the backstop for
 * other processes' appends.
 */
@Tag("conformance")
class PushWakeUpConformanceTest {

    /** Much longer than any wait below: a projection that waited for its poll would fail them. */
    private static final Duration POLL = Duration.ofMinutes(5);
    private static final Duration WITHIN = Duration.ofSeconds(30);

    private static Optional<Tally> tally(DocumentStore store, String id) {
        return store.querySession().load(Tally.class, id);
    }

    @Test
    void anAppendInThisJvmIsProjectedWithoutWaitingForThePoll() {
        try (TestDatabase db = TestDatabase.create("push")) {
            StoreOptions options = withTally(fastDaemon(db));
            options.daemon().pollingInterval(POLL).maxRetryBackoff(POLL);
            try (DocumentStore store = Ferret.createStore(options)) {
                // the daemon's first poll ran at start; every later one is minutes away
                appendTicks(store, "p", 3);
                await().atMost(WITHIN).until(() -> tally(store, "p").map(Tally::count).orElse(0L) == 3);
                // a burst coalesces, and every event of it arrives
                for (int i = 0; i < 20; i++) {
                    appendTicks(store, "burst", 1);
                }
                await().atMost(WITHIN).until(() -> tally(store, "burst").map(Tally::count).orElse(0L) == 20);
                assertThat(store.daemon().status().highWaterMark().mark()).isEqualTo(23);
            }
        }
    }

    @Test
    void anAppendOnAnotherNodeWakesThisNodeWherePostgresPushesAndAKilledListenerListensAgain() {
        try (TestDatabase db = TestDatabase.create("pushnodes")) {
            StoreOptions readerOptions = withTally(fastDaemon(db));
            readerOptions.daemon().pollingInterval(POLL);
            StoreOptions writerOptions = fastDaemon(db);
            writerOptions.daemon().mode(DaemonMode.DISABLED);
            try (DocumentStore reader = Ferret.createStore(readerOptions);
                 DocumentStore writer = Ferret.createStore(writerOptions)) {
                AsyncDaemon daemon = (AsyncDaemon) reader.daemon();
                if (db.engine() != DatabaseEngine.POSTGRESQL) {
                    // no push from the server: the other node's appends are seen at the next poll
                    assertThat(daemon.listeningForCommits()).isFalse();
                    return;
                }
                await().atMost(WITHIN).until(daemon::listeningForCommits);
                appendTicks(writer, "remote", 2);
                await().atMost(WITHIN).until(() -> tally(reader, "remote").map(Tally::count).orElse(0L) == 2);

                // the listening session dies: the node listens again after a back-off and is woken as before
                String listener = "SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity WHERE query = 'LISTEN ferret_"
                        + db.schema() + "_pc_events'";
                long killed = db.queryLong(listener);
                assertThat(db.queryLong("SELECT count(pg_terminate_backend(" + killed + "))")).isOne();
                await().atMost(WITHIN).until(() -> db.queryLong(listener) != 0 && db.queryLong(listener) != killed);
                appendTicks(writer, "remote", 3);
                await().atMost(WITHIN).until(() -> tally(reader, "remote").map(Tally::count).orElse(0L) == 5);
                assertThat(reader.daemon().status().highWaterMark().mark()).isEqualTo(5);

                // a stopped daemon stops listening and gives its connection back
                daemon.stop();
                await().atMost(WITHIN).until(() -> !daemon.listeningForCommits());
                await().atMost(WITHIN).until(() -> db.queryLong(listener) == 0);
            }
        }
    }
}
