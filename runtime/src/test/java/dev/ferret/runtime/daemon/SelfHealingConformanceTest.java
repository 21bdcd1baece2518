package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.RefusingScheduler;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The faults that used to stop the daemon for good, each injected at its exact step: a commit whose reply is lost,
 * a scheduler that refuses or drops runs, a drain that cancels a run that never started, a page that ignores
 * interrupts. After each the daemon heals by itself, loses nothing, and its status told the truth meanwhile.
 */
@Tag("conformance")
class SelfHealingConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final TestResources resources = new TestResources();
    /** Post-commit listener runs and published side effects, per event sequence. */
    private final Map<Long, AtomicInteger> postCommits = new ConcurrentHashMap<>();
    private final Map<Long, AtomicInteger> sideEffects = new ConcurrentHashMap<>();

    @AfterEach
    void closeAll() throws Exception {
        resources.close();
    }

    private TestDatabase database(String label) {
        return resources.database(label);
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        return resources.add(closeable);
    }

    public record Effect(long sequence) {
    }

    /** Counts each committed event's post-commit call: more than one is a repeat, none a loss. */
    public class PostCommitCounter extends SubscriptionBase {
        public PostCommitCounter() {
            super();
        }

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            List<Long> sequences = page.events().stream().map(EventEnvelope::sequence).toList();
            return () -> sequences.forEach(s -> postCommits.computeIfAbsent(s, k -> new AtomicInteger())
                    .incrementAndGet());
        }
    }

    private StoreOptions withEffects(StoreOptions options) {
        Snapshot<Tally> tally = Snapshot.of("Tally", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()))
                .raiseSideEffects((doc, event, fx) -> fx.publish(new Effect(event.sequence())));
        options.projections().add(tally, Lifecycle.ASYNC)
                .subscribe(new PostCommitCounter())
                .publishPayloads(message -> sideEffects.computeIfAbsent(((Effect) message).sequence(),
                        k -> new AtomicInteger()).incrementAndGet());
        return options;
    }

    private static long tally(DocumentStore store, String stream) {
        return store.querySession().load(Tally.class, stream).map(Tally::count).orElse(0L);
    }

    private static List<Long> sequences(DocumentStore store, List<String> streams) {
        List<Long> all = new ArrayList<>();
        for (String stream : streams) {
            store.querySession().fetchStream(stream).forEach(e -> all.add(e.sequence()));
        }
        return all;
    }

    private void assertEachOnce(Map<Long, AtomicInteger> counts, List<Long> sequences, String what) {
        for (long sequence : sequences) {
            assertThat(counts.getOrDefault(sequence, new AtomicInteger()).get())
                    .as(what + " of sequence " + sequence).isEqualTo(1);
        }
        assertThat(counts.keySet()).as(what + " of sequences that do not exist").containsOnlyElementsOf(sequences);
    }

    // -- a commit whose reply is lost -------------------------------------------------------------------------

    @Test
    void soloACommitWhoseReplyIsLostNeitherPausesNorRepeatsNorLosesPostCommitWork() {
        lostCommitReplies(DaemonMode.SOLO, "lostreplysolo");
    }

    @Test
    void hotColdACommitWhoseReplyIsLostNeitherPausesNorRepeatsNorLosesPostCommitWork() {
        lostCommitReplies(DaemonMode.HOT_COLD, "lostreplyhc");
    }

    private void lostCommitReplies(DaemonMode mode, String label) {
        TestDatabase db = database(label);
        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        StoreOptions options = withEffects(fastDaemon(db)).dataSource(flaky);
        options.daemon().mode(mode).lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(500)).probeTimeout(Duration.ofMillis(200)).batchSize(7);
        // every page commit of the first twelve reaches the server and then reports a dead connection
        flaky.loseCommitReplies(FlakyDataSource.shardWorkers(), 12);
        DocumentStore store = closing(Ferret.createStore(options));
        List<String> streams = DaemonFixtures.streams("lost", 4);
        for (int round = 0; round < 5; round++) {
            for (String stream : streams) {
                appendTicks(store, stream, 6);
            }
        }
        await().atMost(WAIT).until(() -> flaky.lostReplies() == 12);
        store.waitForNonStaleProjectionData(WAIT);

        DaemonStatus status = store.daemon().status();
        assertThat(status.shards()).allSatisfy(shard -> {
            assertThat(shard.state()).as(shard.name()).isEqualTo(ShardState.RUNNING);
            assertThat(shard.error()).as(shard.name()).isNull();
        });
        for (String stream : streams) {
            assertThat(tally(store, stream)).as(stream).isEqualTo(30);
        }
        List<Long> sequences = sequences(store, streams);
        assertThat(sequences).hasSize(120);
        await().atMost(WAIT).until(() -> postCommits.size() == 120 && sideEffects.size() == 120);
        assertEachOnce(postCommits, sequences, "post-commit listener runs");
        assertEachOnce(sideEffects, sequences, "published side effects");
    }

    // -- a scheduler that refuses or drops runs ---------------------------------------------------------------

    private RefusingScheduler scheduler;

    private StoreSeams refusingSeams() {
        return StoreSeams.defaults().withExecutors(workers -> {
            scheduler = new RefusingScheduler(Executors.newSingleThreadScheduledExecutor(r -> {
                Thread thread = new Thread(r, "test-daemon-scheduler");
                thread.setDaemon(true);
                return thread;
            }));
            ExecutorService pool = Executors.newFixedThreadPool(workers, r -> {
                Thread thread = new Thread(r, "test-shard-worker");
                thread.setDaemon(true);
                return thread;
            });
            return new DaemonExecutors(scheduler, pool, true);
        });
    }

    private static StoreOptions quickHealth(StoreOptions options) {
        // a short heartbeat bound: 3 x 200 ms + 200 ms fence + 200 ms probe
        options.daemon().probeTimeout(Duration.ofMillis(200)).monitoringInterval(Duration.ofMillis(500))
                .lockAcquireInterval(Duration.ofMillis(100));
        return options;
    }

    @Test
    void oneRefusedRunIsScheduledAgainWithoutAnyoneAsking() {
        TestDatabase db = database("refusedonce");
        DocumentStore store = closing(Ferret.createStore(DaemonFixtures.withTally(quickHealth(fastDaemon(db))),
                refusingSeams()));
        appendTicks(store, "r", 5);
        store.waitForNonStaleProjectionData(WAIT);

        scheduler.refuseNext(1);
        await().atMost(WAIT).until(() -> scheduler.refused() == 1);
        appendTicks(store, "r", 5);
        // no status read, no wait: only the daemon's own loops may bring the mark and the shard forward
        await().atMost(WAIT).until(() -> tally(store, "r") == 10);
    }

    @Test
    void aSuspendedSchedulerTurnsLivenessDownAndTheDaemonResumesAfterIt() {
        TestDatabase db = database("refusedall");
        DocumentStore store = closing(Ferret.createStore(DaemonFixtures.withTally(quickHealth(fastDaemon(db))),
                refusingSeams()));
        appendTicks(store, "s", 5);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(store.daemon().status().live()).isTrue();

        scheduler.refuse(true);
        await().atMost(WAIT).until(() -> scheduler.refused() > 0);
        appendTicks(store, "s", 5);
        await().atMost(WAIT).until(() -> !store.daemon().status().live());
        DaemonStatus down = store.daemon().status();
        assertThat(down.livenessProblems()).anyMatch(p -> p.contains("high water mark detector"));
        assertThat(down.heartbeatAge()).isGreaterThan(Duration.ofMillis(1000));
        assertThat(down.healthy()).isFalse();

        // resumed: nobody reads the status; the next append finds the loops missing and schedules them again
        scheduler.refuse(false);
        appendTicks(store, "s", 1);
        await().atMost(WAIT).until(() -> tally(store, "s") == 11);
        await().atMost(WAIT).until(() -> store.daemon().status().live());
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    @Test
    void runsTheContainerAcceptsAndNeverRunsAreFoundAndScheduledAgain() {
        TestDatabase db = database("dropped");
        DocumentStore store = closing(Ferret.createStore(DaemonFixtures.withTally(quickHealth(fastDaemon(db))),
                refusingSeams()));
        appendTicks(store, "d", 5);
        store.waitForNonStaleProjectionData(WAIT);

        scheduler.drop(true);
        await().atMost(WAIT).until(() -> scheduler.dropped() >= 2);
        appendTicks(store, "d", 5);
        await().atMost(WAIT).until(() -> !store.daemon().status().live());

        // resumed: a health probe's status read finds the dropped runs and schedules them again
        scheduler.drop(false);
        await().atMost(WAIT).until(() -> store.daemon().status().live() && tally(store, "d") == 10);
    }

    @Test
    void aRetryingShardWhoseRetryWasRefusedIsWokenOnceTheSchedulerAcceptsAgain() {
        TestDatabase db = database("retryrefused");
        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        StoreOptions options = DaemonFixtures.withTally(quickHealth(fastDaemon(db))).dataSource(flaky);
        DocumentStore store = closing(Ferret.createStore(options, refusingSeams()));
        appendTicks(store, "t", 5);
        store.waitForNonStaleProjectionData(WAIT);

        // the page workers lose the database; the detector still reads, sees new events and wakes the shard
        flaky.refuseTo(thread -> thread.getName().equals("test-shard-worker"));
        appendTicks(store, "t", 5);
        await().atMost(WAIT).until(() -> store.daemon().status().shard("Tally:All").orElseThrow().state()
                == ShardState.RETRYING);
        // and now the container refuses the retry timers and the loops too
        scheduler.refuse(true);
        await().atMost(WAIT).until(() -> !store.daemon().status().live());
        flaky.refuseTo(thread -> false);
        scheduler.refuse(false);
        // a health probe revives the supervisor, which wakes the shard whose retry timer was refused
        await().atMost(WAIT).until(() -> store.daemon().status().live() && tally(store, "t") == 10);
        await().atMost(WAIT).until(() -> store.daemon().status().healthy());
    }

    @Test
    void aHotColdNodeWhoseLockRoundsWereRefusedTakesItsShardsOnceTheyAreAccepted() {
        TestDatabase db = database("hcrefused");
        StoreOptions options = DaemonFixtures.withTally(quickHealth(fastDaemon(db)));
        options.daemon().mode(DaemonMode.HOT_COLD);
        StoreSeams seams = refusingSeams();
        DocumentStore store = closing(Ferret.createStore(options, seams.withExecutors(workers -> {
            DaemonExecutors executors = seams.executors().apply(workers);
            // suspended from the start: the first lock round is refused, as every other run
            scheduler.refuse(true);
            return executors;
        })));
        appendTicks(store, "h", 5);
        await().atMost(WAIT).until(() -> !store.daemon().status().live());
        assertThat(store.daemon().status().livenessProblems()).anyMatch(p -> p.contains("HotCold"));
        assertThat(tally(store, "h")).isZero();

        scheduler.refuse(false);
        await().atMost(WAIT).until(() -> store.daemon().status().live() && tally(store, "h") == 5);
        assertThat(store.daemon().status().shard("Tally:All").orElseThrow().state()).isEqualTo(ShardState.RUNNING);
    }

    // -- a drain that cancels a queued run --------------------------------------------------------------------

    /** Blocks each event while its gate is closed, ignoring interrupts (work that cannot be cancelled). */
    public static final class Stubborn extends EventProjection {
        volatile CountDownLatch gate = new CountDownLatch(1);
        final AtomicInteger entered = new AtomicInteger();

        public Stubborn() {
            super("Stubborn");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            entered.incrementAndGet();
            CountDownLatch current = gate;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (current.getCount() > 0 && System.nanoTime() < deadline) {
                try {
                    current.await(50, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ignored) {
                    // deliberately ignored: the page must be left to end on its own
                }
            }
        }
    }

    @Test
    void aRunCancelledBeforeItStartedLeavesTheShardAbleToRestartAndRebuild() throws Exception {
        TestDatabase db = database("queuedcancel");
        Stubborn stubborn = new Stubborn();
        StoreOptions options = fastDaemon(db);
        // one worker: the stubborn page holds it, and the Tally run waits in the queue behind it
        options.daemon().workerThreads(1).stopAndDrainTimeout(Duration.ofMillis(300));
        options.projections().add(stubborn, Lifecycle.ASYNC);
        DaemonFixtures.withTally(options);
        DocumentStore store = closing(Ferret.createStore(options));
        appendTicks(store, "q", 3);
        await().atMost(WAIT).until(() -> stubborn.entered.get() > 0);

        // the drain cancels Tally's queued run, which never started
        store.daemon().restart("Tally:All");
        stubborn.gate.countDown();
        await().atMost(WAIT).until(() -> tally(store, "q") == 3);

        stubborn.gate = new CountDownLatch(1);
        int entered = stubborn.entered.get();
        appendTicks(store, "q", 2);
        await().atMost(WAIT).until(() -> stubborn.entered.get() > entered);
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try {
            Future<?> rebuild = caller.submit(() -> store.daemon().rebuild("Tally", WAIT, progress -> { }));
            await().atMost(WAIT).until(() -> store.daemon().status().shard("Tally:All").orElseThrow().state()
                    == ShardState.REBUILDING);
            stubborn.gate.countDown();
            rebuild.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            caller.shutdownNow();
        }
        assertThat(tally(store, "q")).isEqualTo(5);
        assertThat(store.daemon().status().shard("Tally:All").orElseThrow().state()).isEqualTo(ShardState.RUNNING);
    }

    // -- stop-all within one bound ----------------------------------------------------------------------------

    @Test
    void closeReturnsWithinOneDrainBoundWhenAPageIgnoresInterruptsAndThatPageNeverCommits() throws Exception {
        TestDatabase db = database("stubbornclose");
        Stubborn stubborn = new Stubborn();
        StoreOptions options = fastDaemon(db);
        Duration bound = Duration.ofSeconds(3);
        options.daemon().stopAndDrainTimeout(bound);
        options.projections().add(stubborn, Lifecycle.ASYNC);
        List<Thread> workers = new CopyOnWriteArrayList<>();
        DocumentStore store = Ferret.createStore(options, StoreSeams.defaults().withExecutors(n -> new DaemonExecutors(
                Executors.newSingleThreadScheduledExecutor(), Executors.newFixedThreadPool(n, r -> {
                    Thread thread = new Thread(r, "stubborn-worker");
                    thread.setDaemon(true);
                    workers.add(thread);
                    return thread;
                }), true)));
        try {
            appendTicks(store, "c", 2);
            await().atMost(WAIT).until(() -> stubborn.entered.get() > 0);
            long started = System.nanoTime();
            store.close();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            // it used to take two bounds (the drain, then the worker shutdown); the margin is for a slow machine
            assertThat(took).isLessThan(bound.plus(bound.dividedBy(2)));
        } finally {
            stubborn.gate.countDown();
        }
        // the abandoned page ends on its own: neither a retry nor its own late commit may move the progression
        for (Thread worker : workers) {
            worker.join(WAIT.toMillis());
            assertThat(worker.isAlive()).isFalse();
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_event_progression")
                + " WHERE name = 'Stubborn:All'")).isZero();
    }

    // -- killed connections on PostgreSQL ---------------------------------------------------------------------

    @Test
    void connectionsKilledEveryFewHundredMillisecondsWhileAppendsGoOnLeaveAnExactFoldOnceTheKillsStop()
            throws Exception {
        TestDatabase db = database("killloop");
        // H2 closes an in-memory database whose sessions are aborted mid-write: server-side kills need a server
        assumeTrue(db.engine() == DatabaseEngine.POSTGRESQL, "pg_terminate_backend runs on PostgreSQL (-Ppostgres)");
        StoreOptions options = withEffects(fastDaemon(db));
        DocumentStore store = closing(Ferret.createStore(options));
        List<String> streams = DaemonFixtures.streams("k", 4);
        Map<String, AtomicInteger> appended = new ConcurrentHashMap<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        AtomicInteger kills = new AtomicInteger();
        Thread killer = new Thread(() -> {
            java.util.Random random = new java.util.Random(42);
            while (System.nanoTime() < until) {
                try {
                    Thread.sleep(200 + random.nextInt(300));
                    kills.addAndGet((int) db.terminateSessions());
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // the killer's own connection may be among the killed
                }
            }
        }, "session-killer");
        killer.start();
        int round = 0;
        while (System.nanoTime() < until) {
            String stream = streams.get(round++ % streams.size());
            try {
                appendTicks(store, stream, 3);
                appended.computeIfAbsent(stream, k -> new AtomicInteger()).addAndGet(3);
            } catch (RuntimeException e) {
                // an append on a killed connection rolled back: not counted
            }
        }
        killer.join();
        assertThat(kills.get()).isPositive();
        // the daemon heals by itself; the test's own reads below should not meet a connection killed at the end
        db.evictPooledConnections();
        // stated bound for recovery after the kills stop: well within a minute
        await().atMost(WAIT).until(() -> store.daemon().status().healthy());
        store.waitForNonStaleProjectionData(WAIT);
        for (String stream : streams) {
            long committed = DaemonFixtures.committedEvents(db, stream);
            assertThat(committed).as("appends reported committed on " + stream)
                    .isGreaterThanOrEqualTo(appended.getOrDefault(stream, new AtomicInteger()).get());
            assertThat(tally(store, stream)).as(stream).isEqualTo(committed);
        }
        List<Long> sequences = sequences(store, streams);
        await().atMost(WAIT).until(() -> postCommits.keySet().containsAll(sequences));
        assertThat(store.daemon().status().shards()).allSatisfy(s -> assertThat(s.state()).isEqualTo(ShardState.RUNNING));
    }
}
