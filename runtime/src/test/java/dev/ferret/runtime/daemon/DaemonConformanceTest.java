package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.committedEvents;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.RebuildProgress;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Gate;
import dev.ferret.runtime.daemon.DaemonFixtures.Hold;
import dev.ferret.runtime.daemon.DaemonFixtures.Holder;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("conformance")
class DaemonConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final List<AutoCloseable> toClose = new ArrayList<>();

    private TestDatabase database(String label) {
        TestDatabase db = TestDatabase.create(label);
        toClose.add(db);
        return db;
    }

    private DocumentStore open(StoreOptions options) {
        DocumentStore store = Ferret.createStore(options);
        toClose.add(0, store);
        return store;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : toClose) {
            closeable.close();
        }
        DaemonFixtures.LATCHES.values().forEach(CountDownLatch::countDown);
        DaemonFixtures.LATCHES.clear();
        DaemonFixtures.ENTERED.clear();
        DaemonFixtures.poisonous = true;
    }

    private static long tally(DocumentStore store, String stream) {
        return store.querySession().load(Tally.class, stream).map(Tally::count).orElse(0L);
    }

    @Test
    void catchesUpAndNonStaleWaitsSeeEverythingAppendedBefore() {
        TestDatabase db = database("catchup");
        DocumentStore store = open(withTally(fastDaemon(db)));
        List<String> streams = DaemonFixtures.streams("s", 5);
        for (String stream : streams) {
            appendTicks(store, stream, 37);
        }
        store.waitForNonStaleProjectionData(WAIT);
        for (String stream : streams) {
            assertThat(tally(store, stream)).isEqualTo(37);
        }
        appendTicks(store, "s-0", 3);
        assertThat(store.querySession().query(Tally.class).queryForNonStaleData(WAIT).where("id", "s-0").toList())
                .extracting(Tally::count).containsExactly(40L);

        DaemonStatus status = store.daemon().status();
        assertThat(status.healthy()).isTrue();
        assertThat(status.shard("Tally:All")).hasValueSatisfying(shard -> {
            assertThat(shard.state()).isEqualTo(ShardState.RUNNING);
            assertThat(shard.progression()).isEqualTo(status.highWaterMark().mark());
            assertThat(shard.lag()).isZero();
        });
        assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                + " WHERE name = 'HighWaterMark'")).isEqualTo(status.highWaterMark().mark());
    }

    @Test
    void nonStaleTimeoutNamesTheLaggingShard() throws Exception {
        TestDatabase db = database("timeout");
        Gate gate = new Gate();
        StoreOptions options = fastDaemon(db);
        options.projections().add(gate, Lifecycle.ASYNC);
        DocumentStore store = open(options);
        appendTicks(store, "t", 3);
        assertThat(gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> store.waitForNonStaleProjectionData(Duration.ofMillis(300)))
                .isInstanceOf(NonStaleTimeoutException.class)
                .hasMessageContaining("Gate:All at 0 of 3 (3 behind, RUNNING)")
                .satisfies(e -> assertThat(((NonStaleTimeoutException) e).lagByShard()).containsEntry("Gate:All", 3L));
        gate.release.countDown();
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(gate.applied).hasValue(3);
    }

    @Test
    void concurrentWritersWithRollbacksAndSlowCommitsLoseNoCommittedEvent() throws Exception {
        TestDatabase db = database("writers");
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().add(new Holder(), Lifecycle.INLINE);
        DocumentStore store = open(options);

        int writers = 4;
        int unitsEach = 25;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            // one append holds its transaction open, with its sequence drawn, longer than the stale threshold
            CountDownLatch held = new CountDownLatch(1);
            DaemonFixtures.LATCHES.put("slow", held);
            CompletableFuture<Void> slow = CompletableFuture.runAsync(() -> {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("slow", new Tick(1), new Hold("slow"));
                    session.saveChanges();
                }
            }, pool);

            List<CompletableFuture<Void>> done = new ArrayList<>();
            AtomicInteger rolledBack = new AtomicInteger();
            for (int w = 0; w < writers; w++) {
                String stream = "w-" + w;
                Random random = new Random(w);
                done.add(CompletableFuture.runAsync(() -> {
                    for (int u = 0; u < unitsEach; u++) {
                        try (DocumentSession session = store.openSession()) {
                            // one in four fails at save: its events drew sequence numbers and roll back
                            session.events().append(stream, new Tick(u),
                                    random.nextInt(4) == 0 ? DaemonFixtures.VETO : new Tick(u));
                            try {
                                session.saveChanges();
                            } catch (ApplyFailedException expected) {
                                rolledBack.incrementAndGet();
                            }
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(rolledBack.get()).isPositive();

            // the open append stalls the mark below its sequence instead of letting it be skipped
            await().atMost(WAIT).until(() -> store.daemon().status().highWaterMark().stalled());
            long slowSequence = db.queryLong("SELECT COALESCE(MAX(seq_id), 0) FROM " + db.table("pc_events"));
            assertThat(store.daemon().status().highWaterMark().mark()).isLessThan(slowSequence);

            held.countDown();
            slow.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }

        store.waitForNonStaleProjectionData(WAIT);
        for (int w = 0; w < writers; w++) {
            String stream = "w-" + w;
            assertThat(tally(store, stream)).as(stream).isEqualTo(committedEvents(db, stream));
        }
        assertThat(tally(store, "slow")).isEqualTo(1);
        DaemonStatus status = store.daemon().status();
        assertThat(status.highWaterMark().stalled()).isFalse();
        assertThat(status.highWaterMark().recentSkips()).isNotEmpty()
                .allSatisfy(skip -> assertThat(skip.reason()).startsWith("rolled back"));
    }

    @Test
    void aRolledBackHoleIsSkippedOnceItsOwnerIsGoneLongBeforeTheForcedThreshold() {
        TestDatabase db = database("gap");
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().add(new Holder(), Lifecycle.INLINE);
        DocumentStore store = open(options);
        appendTicks(store, "g", 2);
        try (DocumentSession session = store.openSession()) {
            session.events().append("g", new Tick(3), DaemonFixtures.VETO);
            assertThatThrownBy(session::saveChanges).isInstanceOf(ApplyFailedException.class);
        }
        appendTicks(store, "g", 1);
        // the forced threshold is 60 s: only the owner probe can pass the hole within this bound
        store.waitForNonStaleProjectionData(Duration.ofSeconds(10));
        assertThat(tally(store, "g")).isEqualTo(3);
        List<GapSkip> skips = store.daemon().status().highWaterMark().recentSkips();
        assertThat(skips).singleElement().satisfies(skip -> {
            assertThat(skip.toSequence() - skip.fromSequence()).isEqualTo(1);
            assertThat(skip.reason()).startsWith("rolled back");
        });
    }

    @Test
    void anAppendHeldOpenAcrossAHoleKeepsTheMarkAtTheHoleWithoutBlockingOtherAppends() throws Exception {
        TestDatabase db = database("held");
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().add(new Holder(), Lifecycle.INLINE);
        DocumentStore store = open(options);
        appendTicks(store, "before", 1);
        store.waitForNonStaleProjectionData(WAIT);
        long heldAt = store.daemon().status().highWaterMark().mark() + 1;
        CountDownLatch entered = new CountDownLatch(1);
        DaemonFixtures.ENTERED.put("held", entered);
        DaemonFixtures.LATCHES.put("held", new CountDownLatch(1));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CompletableFuture<Void> held = CompletableFuture.runAsync(() -> {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("held", new Tick(1), new Hold("held"));
                    session.saveChanges();
                }
            }, pool);
            assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();

            // while it is open, across several detections and past the stale threshold, other appends complete,
            // rolled-back ones included; none waits on the open one or on the detector
            CompletableFuture<Void> others = CompletableFuture.runAsync(() -> {
                for (int i = 1; i <= 20; i++) {
                    try (DocumentSession session = store.openSession()) {
                        session.events().append("other", new Tick(-i), DaemonFixtures.VETO);
                        session.saveChanges();
                    } catch (ApplyFailedException expected) {
                        // a rolled-back hole above the held one, closed by the tick below
                    }
                    appendTicks(store, "other", 1);
                    sleep(30);
                }
            }, pool);
            others.get(20, TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> store.daemon().status().highWaterMark().stalled());
            assertThat(store.daemon().status().highWaterMark().mark()).as("held at the open append's hole")
                    .isEqualTo(heldAt - 1);
            assertThat(held).isNotDone();
            assertThat(store.daemon().status().highWaterMark().recentSkips()).as("nothing passed yet").isEmpty();

            DaemonFixtures.LATCHES.get("held").countDown();
            held.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(tally(store, "held")).isEqualTo(1);
        assertThat(tally(store, "other")).isEqualTo(committedEvents(db, "other")).isEqualTo(20);
        DaemonStatus status = store.daemon().status();
        assertThat(status.highWaterMark().stalled()).isFalse();
        assertThat(status.highWaterMark().totalSkips()).isEqualTo(20);
        assertThat(status.highWaterMark().recentSkips())
                .allSatisfy(skip -> assertThat(skip.reason()).startsWith("rolled back"));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void anAppendHeldOpenPastTheForcedThresholdIsSkippedLoudly() throws Exception {
        TestDatabase db = database("forced");
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().forcedGapSkipThreshold(Duration.ofMillis(1500));
        options.projections().add(new Holder(), Lifecycle.INLINE);
        DocumentStore store = open(options);
        CountDownLatch held = new CountDownLatch(1);
        DaemonFixtures.LATCHES.put("forced", held);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<Void> slow = CompletableFuture.runAsync(() -> {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("held", new Hold("forced"));
                    session.saveChanges();
                }
            }, pool);
            await().atMost(WAIT).until(() -> committedEventsIncludingUncommitted(db) >= 0
                    && DaemonFixtures.LATCHES.containsKey("forced"));
            appendTicks(store, "after", 2);
            await().atMost(WAIT).until(() -> !store.daemon().status().highWaterMark().recentSkips().isEmpty());
            assertThat(store.daemon().status().highWaterMark().recentSkips().get(0).reason()).startsWith("forced");
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(tally(store, "after")).isEqualTo(2);
            held.countDown();
            slow.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    private static long committedEventsIncludingUncommitted(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events"));
    }

    @Test
    void anOutageMakesTheDaemonUnhealthyAndItRecoversByItself() {
        TestDatabase db = database("outage");
        var flaky = new dev.ferret.runtime.testing.FlakyDataSource(db.dataSource());
        StoreOptions options = withTally(fastDaemon(db)).dataSource(flaky);
        DocumentStore store = open(options);
        appendTicks(store, "o", 10);
        store.waitForNonStaleProjectionData(WAIT);

        appendTicks(store, "o", 10);
        if (db.engine() == dev.ferret.DatabaseEngine.POSTGRESQL) {
            db.terminateSessions();
        }
        flaky.down(true);
        await().atMost(WAIT).until(() -> !store.daemon().status().healthy());
        assertThat(store.daemon().status().highWaterMark().healthy()).isFalse();
        flaky.down(false);
        await().atMost(WAIT).until(() -> store.daemon().status().healthy());
        // a pooled connection killed above fails the writer's first try, before anything commits
        await().atMost(WAIT).ignoreExceptionsInstanceOf(dev.ferret.DatabaseException.class).until(() -> {
            appendTicks(store, "o", 5);
            return true;
        });
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(tally(store, "o")).isEqualTo(25);
    }

    @Test
    void aSecondRunnerAdvancingTheShardStopsTheFirstWithoutADoubleWrite() throws Exception {
        TestDatabase db = database("outoforder");
        Gate gate = new Gate();
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().add(gate, Lifecycle.ASYNC);
        DocumentStore store = open(options);
        appendTicks(store, "x", 4);
        assertThat(gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
        // another runner commits a page of this shard first
        db.execute("INSERT INTO " + db.table("pc_event_progression")
                + " (name, last_seq_id, last_updated) VALUES ('Gate:All', 2, CURRENT_TIMESTAMP)");
        gate.release.countDown();
        await().atMost(WAIT).until(() -> store.daemon().status().shard("Gate:All").orElseThrow().state()
                == ShardState.PAUSED);
        assertThat(store.daemon().status().shard("Gate:All").orElseThrow().error())
                .isInstanceOf(ProgressionConflictException.class).hasMessageContaining("Gate:All");
        assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                + " WHERE name = 'Gate:All'")).isEqualTo(2);
        assertThat(store.daemon().status().healthy()).isFalse();
    }

    @Test
    void killedMidPageTheRestartedDaemonEndsWithAFreshFold() throws Exception {
        TestDatabase db = database("crash");
        StoreOptions appendOnly = fastDaemon(db);
        appendOnly.daemon().mode(dev.ferret.daemon.DaemonMode.DISABLED);
        DocumentStore writer = open(appendOnly);
        List<String> streams = DaemonFixtures.streams("c", 6);
        for (int round = 0; round < 10; round++) {
            for (String stream : streams) {
                appendTicks(writer, stream, 3);
            }
        }
        // a node that dies with a page in flight: the gate holds its second shard mid-page
        Gate gate = new Gate();
        StoreOptions first = withTally(fastDaemon(db));
        first.projections().add(gate, Lifecycle.ASYNC);
        DocumentStore doomed = Ferret.createStore(first);
        assertThat(gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
        doomed.close();

        DocumentStore restarted = open(withTally(fastDaemon(db)));
        restarted.waitForNonStaleProjectionData(WAIT);
        for (String stream : streams) {
            assertThat(tally(restarted, stream)).as(stream).isEqualTo(30);
        }
    }

    @Test
    void rebuildReplaysToAFreshFoldWithListenersSilent() {
        TestDatabase db = database("rebuild");
        List<ChangeSet> afterCommits = new CopyOnWriteArrayList<>();
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().asyncListeners().add(new AsyncListener() {
            @Override
            public void afterCommit(dev.ferret.QuerySession session, ChangeSet changes) {
                afterCommits.add(changes);
            }
        });
        DocumentStore store = open(options);
        for (String stream : DaemonFixtures.streams("r", 4)) {
            appendTicks(store, stream, 60);
        }
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(afterCommits).isNotEmpty();
        try (DocumentSession session = store.openSession()) {
            session.store(new Tally("r-0", 999, 0));
            session.store(new Tally("stray", 1, 0));
            session.saveChanges();
        }
        afterCommits.clear();
        List<RebuildProgress> progress = new CopyOnWriteArrayList<>();
        store.daemon().rebuild("Tally", WAIT, progress::add);

        for (String stream : DaemonFixtures.streams("r", 4)) {
            assertThat(tally(store, stream)).isEqualTo(60);
        }
        assertThat(store.querySession().load(Tally.class, "stray")).isEmpty();
        assertThat(afterCommits).isEmpty();
        assertThat(progress).last().satisfies(p -> assertThat(p.eventsDone()).isEqualTo(p.eventsTotal()));
        assertThat(store.daemon().status().shard("Tally:All").orElseThrow().state()).isEqualTo(ShardState.RUNNING);

        appendTicks(store, "r-1", 1);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(afterCommits).isNotEmpty();
    }

    @Test
    void listenersSeeEachBatchAroundItsCommitAndAFailingAfterCommitIsSwallowed() {
        TestDatabase db = database("listeners");
        AtomicInteger before = new AtomicInteger();
        List<ChangeSet> after = new CopyOnWriteArrayList<>();
        StoreOptions options = withTally(fastDaemon(db));
        options.projections().asyncListeners().add(new AsyncListener() {
            @Override
            public void beforeCommit(dev.ferret.projections.DocumentOperations operations, ChangeSet changes) {
                before.incrementAndGet();
            }

            @Override
            public void afterCommit(dev.ferret.QuerySession session, ChangeSet changes) {
                after.add(changes);
                throw new IllegalStateException("cache is down");
            }
        });
        DocumentStore store = open(options);
        appendTicks(store, "l", 1);
        store.waitForNonStaleProjectionData(WAIT);
        appendTicks(store, "l", 1);
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(tally(store, "l")).isEqualTo(2);
        assertThat(after).hasSize(2);
        assertThat(before).hasValue(2);
        assertThat(after.get(0).inserted()).containsExactly(new Tally("l", 1, 1));
        assertThat(after.get(1).updated()).containsExactly(new Tally("l", 2, 1));
        assertThat(after.get(0).shardName()).isEqualTo("Tally:All");
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    @Test
    void withSkipApplyErrorsAPoisonEventGoesToTheDeadLettersAndTheShardGoesOn() {
        TestDatabase db = database("deadletters");
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().skipApplyErrors(true);
        DocumentStore store = open(options);
        appendTicks(store, "p", 2);
        try (DocumentSession session = store.openSession()) {
            session.events().append("p", new Poison("bad data"));
            session.saveChanges();
        }
        appendTicks(store, "p", 2);
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(tally(store, "p")).isEqualTo(4);
        long poisonSequence = store.querySession().fetchStream("p").get(2).sequence();
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters") + " WHERE seq_id = "
                + poisonSequence + " AND projection = 'Tally:All' AND type = 'Poison'"
                + " AND exception_type = 'java.lang.IllegalStateException'")).isEqualTo(1);
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    @Test
    void withoutSkipAPoisonEventPausesTheShardUntilRestarted() {
        TestDatabase db = database("pause");
        DocumentStore store = open(withTally(fastDaemon(db)));
        appendTicks(store, "p", 2);
        try (DocumentSession session = store.openSession()) {
            session.events().append("p", new Poison("bad data"));
            session.saveChanges();
        }
        appendTicks(store, "p", 2);
        await().atMost(WAIT).until(() -> store.daemon().status().shard("Tally:All").orElseThrow().state()
                == ShardState.PAUSED);
        assertThat(store.daemon().status().shard("Tally:All").orElseThrow().error())
                .isInstanceOf(ApplyFailedException.class).hasMessageContaining("Poison").hasMessageContaining("'p'");
        assertThat(store.daemon().status().healthy()).isFalse();
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters"))).isZero();

        DaemonFixtures.poisonous = false;
        store.daemon().restart("Tally:All");
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(tally(store, "p")).isEqualTo(4);
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    @Test
    void inlineProjectionsCommitWithTheEventsOrNotAtAll() {
        TestDatabase db = database("inline");
        StoreOptions options = db.options();
        options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.INLINE);
        DocumentStore store = open(options);
        appendTicks(store, "i", 3);
        assertThat(tally(store, "i")).isEqualTo(3);
        try (DocumentSession session = store.openSession()) {
            session.events().append("i", new Tick(4), new Poison("inline"));
            assertThatThrownBy(session::saveChanges).isInstanceOf(ApplyFailedException.class);
        }
        assertThat(tally(store, "i")).isEqualTo(3);
        assertThat(store.querySession().fetchStream("i")).hasSize(3);
        assertThatThrownBy(() -> store.waitForNonStaleProjectionData(WAIT))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("DISABLED");
    }
}
