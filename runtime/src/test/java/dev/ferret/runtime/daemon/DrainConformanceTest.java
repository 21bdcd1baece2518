package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Gate;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * StopAndDrainTimeout: finish the page in flight, drop the queue, cancel past the bound. The bounds that a test
 * must see pass run on {@link VirtualTime}, so no test sleeps or measures the machine's speed.
 */
@Tag("conformance")
class DrainConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private static long progression(TestDatabase db, String shard) {
        return db.queryLong("SELECT COALESCE(MAX(last_seq_id), 0) FROM " + db.table("pc_event_progression")
                + " WHERE name = '" + shard + "'");
    }

    private static StoreOptions writerOnly(TestDatabase db) {
        StoreOptions options = fastDaemon(db);
        options.daemon().mode(DaemonMode.DISABLED);
        return options;
    }

    @Test
    void aPageSlowerThanTheBoundIsCancelledRolledBackAndReprocessedOnTheNextStart() throws Exception {
        try (TestDatabase db = TestDatabase.create("drainslow");
             DocumentStore writer = Ferret.createStore(writerOnly(db))) {
            appendTicks(writer, "d", 3);
            Gate wedged = new Gate();
            StoreOptions options = fastDaemon(db);
            options.daemon().stopAndDrainTimeout(Duration.ofMillis(300));
            options.projections().add(wedged, Lifecycle.ASYNC);
            DocumentStore store = Ferret.createStore(options);
            assertThat(wedged.entered.await(30, TimeUnit.SECONDS)).isTrue();
            store.close();
            assertThat(wedged.applied).hasValue(0);
            assertThat(progression(db, "Gate:All")).isZero();

            Gate open = new Gate();
            open.release.countDown();
            StoreOptions next = fastDaemon(db);
            next.projections().add(open, Lifecycle.ASYNC);
            try (DocumentStore restarted = Ferret.createStore(next)) {
                restarted.waitForNonStaleProjectionData(WAIT);
                assertThat(open.applied).hasValue(3);
            }
        }
    }

    @Test
    void aPageThatFinishesWithinTheBoundCommitsAndTheQueueBehindItIsLeftForTheNextOwner() throws Exception {
        try (TestDatabase db = TestDatabase.create("drainfast");
             DocumentStore writer = Ferret.createStore(writerOnly(db))) {
            appendTicks(writer, "d", 120); // batch size 50: three pages
            Gate gate = new Gate();
            StoreOptions options = fastDaemon(db);
            options.daemon().stopAndDrainTimeout(Duration.ofSeconds(30));
            options.projections().add(gate, Lifecycle.ASYNC);
            DocumentStore store = Ferret.createStore(options);
            assertThat(gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
            // the stop is asked for while the first page is in flight; then that page may finish
            ((AsyncDaemon) store.daemon()).requestStopAll();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(store::close);
            gate.release.countDown();
            closing.get(60, TimeUnit.SECONDS);
            assertThat(gate.applied).hasValue(50);
            long firstPageEnd = writer.querySession().fetchStream("d").get(49).sequence();
            assertThat(progression(db, "Gate:All")).isEqualTo(firstPageEnd);

            Gate next = new Gate();
            next.release.countDown();
            StoreOptions resumed = fastDaemon(db);
            resumed.projections().add(next, Lifecycle.ASYNC);
            try (DocumentStore restarted = Ferret.createStore(resumed)) {
                restarted.waitForNonStaleProjectionData(WAIT);
                assertThat(next.applied).hasValue(70);
            }
        }
    }

    @Test
    void stoppingManyWedgedShardsTakesAboutOneBoundNotOnePerShard() throws Exception {
        try (TestDatabase db = TestDatabase.create("drainmany");
             DocumentStore writer = Ferret.createStore(writerOnly(db))) {
            appendTicks(writer, "d", 2);
            int shards = 12;
            Duration bound = Duration.ofSeconds(2);
            StoreOptions options = fastDaemon(db);
            options.daemon().stopAndDrainTimeout(bound);
            List<Gate> gates = new ArrayList<>();
            for (int i = 0; i < shards; i++) {
                Gate gate = new Gate();
                gates.add(gate);
                options.projections().add(new GateNamed("Gate" + i, gate), Lifecycle.ASYNC);
            }
            VirtualTime time = new VirtualTime();
            DocumentStore store = Ferret.createStore(options, StoreSeams.defaults().withTime(time));
            // four page workers: four gates are entered and wedged, the other shards wait in the queue
            Awaitility.await().atMost(WAIT)
                    .until(() -> gates.stream().filter(g -> g.entered.getCount() == 0).count() == 4);
            Duration started = time.elapsed();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(store::close);
            time.awaitWaiters(1, WAIT); // the stop waits on the first shard's run
            time.advance(bound);
            while (time.awaitWaitersOrDone(1, closing, WAIT)) {
                // a run cancelled while still queued unwinds only once a worker is free: its grace runs out instead
                time.advance(ShardAgent.CANCEL_GRACE);
            }
            closing.get(60, TimeUnit.SECONDS);
            Duration took = time.elapsed().minus(started);
            // one drain after another would need 4 x 2 s for the wedged ones; in parallel they take one bound
            assertThat(took).isLessThan(bound.multipliedBy(3));
            assertThat(gates).allSatisfy(g -> assertThat(g.applied).hasValue(0));
        }
    }

    @Test
    void aNonPositiveBoundWaitsForThePageHoweverLongItTakes() throws Exception {
        try (TestDatabase db = TestDatabase.create("drainzero");
             DocumentStore writer = Ferret.createStore(writerOnly(db))) {
            appendTicks(writer, "d", 3);
            Gate gate = new Gate();
            StoreOptions options = fastDaemon(db);
            options.daemon().stopAndDrainTimeout(Duration.ZERO);
            options.projections().add(gate, Lifecycle.ASYNC);
            VirtualTime time = new VirtualTime();
            DocumentStore store = Ferret.createStore(options, StoreSeams.defaults().withTime(time));
            assertThat(gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(store::close);
            time.awaitWaiters(1, WAIT);
            // longer than any bound would allow; the stop must still be waiting, parked at the new time
            time.advance(Duration.ofHours(1));
            time.awaitWaiters(1, WAIT);
            assertThat(closing).isNotDone();
            gate.release.countDown();
            closing.get(60, TimeUnit.SECONDS);
            assertThat(gate.applied).hasValue(3);
            assertThat(progression(db, "Gate:All")).isEqualTo(writer.querySession().fetchStream("d").get(2).sequence());
        }
    }

    /** Delegates to a gate under another name. */
    static final class GateNamed extends dev.ferret.projections.EventProjection {
        private final Gate gate;

        GateNamed(String name, Gate gate) {
            super(name);
            this.gate = gate;
        }

        @Override
        public void apply(dev.ferret.EventEnvelope event, dev.ferret.projections.DocumentOperations operations) {
            gate.apply(event, operations);
        }
    }
}
