package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Several daemon nodes, each with its own connection pool, on one store, competing for shard locks. */
@Tag("conformance")
class HotColdConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Applications per (shard, sequence), across every node of a test. */
    private final Map<String, AtomicInteger> applications = new ConcurrentHashMap<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** Holds every page of the test that sets it, to make pages slower than the monitor's cycle. */
    private volatile CountDownLatch slowPages;

    /** Counts each application of each event, so a double apply shows. */
    final class Counting extends EventProjection {
        Counting(String name) {
            super(name);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            CountDownLatch slow = slowPages;
            if (slow != null) {
                try {
                    slow.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            applications.computeIfAbsent(name() + "@" + event.sequence(), k -> new AtomicInteger()).incrementAndGet();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : toClose) {
            closeable.close();
        }
    }

    private TestDatabase database(String label) {
        TestDatabase db = TestDatabase.create(label);
        toClose.add(db);
        return db;
    }

    private DocumentStore node(TestDatabase db, String name, int shards, boolean monitor) {
        StoreOptions options = fastDaemon(db).dataSource(db.newPool(name));
        options.daemon().mode(DaemonMode.HOT_COLD)
                .lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(monitor ? Duration.ofMillis(300) : Duration.ZERO)
                .probeTimeout(Duration.ofMillis(200));
        for (int i = 0; i < shards; i++) {
            options.projections().add(new Counting("Count" + i), Lifecycle.ASYNC);
        }
        DocumentStore store = Ferret.createStore(options);
        toClose.add(0, store);
        return store;
    }

    private static Set<String> owned(DocumentStore store) {
        return ((AsyncDaemon) store.daemon()).ownedShards();
    }

    private static long lockSession(DocumentStore store) {
        return ((AsyncDaemon) store.daemon()).lockSessionId();
    }

    private void assertEachEventAppliedOnce(int shards, List<Long> sequences) {
        for (int i = 0; i < shards; i++) {
            for (long sequence : sequences) {
                assertThat(applications.get("Count" + i + "@" + sequence)).as("Count%d@%d", i, sequence)
                        .isNotNull().hasValue(1);
            }
        }
    }

    private static List<Long> sequences(DocumentStore store, String stream) {
        return store.querySession().fetchStream(stream).stream().map(EventEnvelope::sequence).toList();
    }

    @Test
    void operatorVerbsOnAShardAnotherNodeHoldsAreRefusedThereAndTheShardKeepsRunningOnItsOwnerOnly() {
        TestDatabase db = database("hcverbs");
        DocumentStore a = node(db, "a", 2, true);
        DocumentStore b = node(db, "b", 2, true);
        await().atMost(WAIT).until(() -> owned(a).size() == 1 && owned(b).size() == 1);
        String ofB = owned(b).iterator().next();
        String projectionOfB = ofB.substring(0, ofB.indexOf(':'));
        appendTicks(a, "v", 10);
        a.waitForNonStaleProjectionData(WAIT);

        for (Runnable verb : List.<Runnable>of(() -> a.daemon().rebuild(projectionOfB, WAIT),
                () -> a.daemon().restart(ofB), () -> a.daemon().hold(ofB), () -> a.daemon().skipFailedEvent(ofB))) {
            assertThatThrownBy(verb::run).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(ofB).hasMessageContaining("another node holds its lock");
        }
        // nothing ran beside the owner: every event applied once, and the shard still runs on b only
        assertThat(owned(a)).doesNotContain(ofB);
        appendTicks(b, "v", 5);
        a.waitForNonStaleProjectionData(WAIT);
        b.waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(2, sequences(a, "v"));
        // on the owner the same verb runs
        b.daemon().restart(ofB);
        b.waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(2, sequences(a, "v"));
    }

    @Test
    void aFailedHeartbeatWriteKeepsTheLockSessionAndEveryShardItHolds() {
        TestDatabase db = database("hcbeat");
        FlakyDataSource pool = new FlakyDataSource(db.newPool("beat"));
        StoreOptions options = fastDaemon(db).dataSource(pool);
        options.daemon().mode(DaemonMode.HOT_COLD)
                .lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300))
                .probeTimeout(Duration.ofMillis(200));
        options.projections().add(new Counting("Beat0"), Lifecycle.ASYNC).add(new Counting("Beat1"), Lifecycle.ASYNC);
        DocumentStore store = Ferret.createStore(options);
        toClose.add(0, store);
        AsyncDaemon daemon = (AsyncDaemon) store.daemon();
        await().atMost(WAIT).until(() -> owned(store).size() == 2);
        long session = daemon.lockSessionId();

        // the scheduler thread's new connections fail: the heartbeat write, never the lock session's own connection
        pool.refuseTo(thread -> thread.getName().contains("daemon-scheduler"));
        int before = pool.refusals();
        await().atMost(WAIT).until(() -> pool.refusals() >= before + 3);
        pool.refuseTo(thread -> false);

        assertThat(daemon.lockSessionId()).isEqualTo(session);
        assertThat(owned(store)).hasSize(2);
        appendTicks(store, "beat", 5);
        store.waitForNonStaleProjectionData(WAIT);
        for (long sequence : sequences(store, "beat")) {
            assertThat(applications.get("Beat0@" + sequence)).as("Beat0@%d", sequence).hasValue(1);
            assertThat(applications.get("Beat1@" + sequence)).as("Beat1@%d", sequence).hasValue(1);
        }
    }

    /** Holds every page until {@code release} opens: a node's drain that takes its time. */
    static final class Blocking extends EventProjection {
        private final CountDownLatch release;

        Blocking(String name, CountDownLatch release) {
            super(name);
            this.release = release;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @Test
    void aStoppingNodeTakesNoShardWhileItsShardsDrain() throws Exception {
        TestDatabase db = database("hcstopping");
        CountDownLatch release = new CountDownLatch(1);
        StoreOptions options = fastDaemon(db).dataSource(db.newPool("a"));
        options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300)).probeTimeout(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(30));
        options.projections().add(new Blocking("Count0", release), Lifecycle.ASYNC)
                .add(new Blocking("Count1", release), Lifecycle.ASYNC);
        DocumentStore a = Ferret.createStore(options);
        toClose.add(0, a);
        DocumentStore b = node(db, "b", 2, true);
        await().atMost(WAIT).until(() -> owned(a).size() == 1 && owned(b).size() == 1);
        String ofB = owned(b).iterator().next();
        appendTicks(b, "drain", 1);
        await().atMost(WAIT).until(() -> b.daemon().status().shard(ofB).orElseThrow().progression() == 1);

        // a's page is held, so its stop drains for as long as the test wants; then b leaves
        Thread closer = new Thread(a::close, "closer");
        closer.start();
        try {
            await().atMost(WAIT).until(() -> !a.daemon().status().running());
            b.close();
            toClose.remove(b);
            // ten of a's acquire intervals with b's lock free: a running node would take it in the first
            await().pollDelay(Duration.ofSeconds(1)).atMost(WAIT).until(() -> true);
            assertThat(owned(a)).doesNotContain(ofB);
            // a stopping node never takes the shard b left: a node that joins now gets it while a still drains
            DocumentStore c = node(db, "c", 2, true);
            await().atMost(WAIT).until(() -> owned(c).contains(ofB));
            assertThat(closer.isAlive()).as("a is still draining").isTrue();
        } finally {
            release.countDown();
            closer.join(WAIT.toMillis());
        }
        assertThat(closer.isAlive()).isFalse();
    }

    @Test
    void aShardGivenBackDrainsOffTheSchedulerWhileLockUpkeepAndStatusGoOn() throws Exception {
        TestDatabase db = database("hcgiveback");
        CountDownLatch release = new CountDownLatch(1);
        StoreOptions options = fastDaemon(db).dataSource(db.newPool("a"));
        options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300)).probeTimeout(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(50));
        options.projections().add(new Blocking("Count0", release), Lifecycle.ASYNC)
                .add(new Blocking("Count1", release), Lifecycle.ASYNC);
        DocumentStore a = Ferret.createStore(options);
        toClose.add(0, a);
        await().atMost(WAIT).until(() -> owned(a).size() == 2);
        appendTicks(a, "held", 1);
        // both pages are now held in apply, so a shard a gives back drains until the latch opens
        await().atMost(WAIT).until(() -> a.daemon().status().highWaterMark().mark() >= 1);
        long session = lockSession(a);

        try {
            DocumentStore b = node(db, "b", 2, true);
            await().atMost(WAIT).until(() -> owned(a).size() == 1);
            Set<String> kept = owned(a);
            String givenBack = a.daemon().status().shards().stream().map(shard -> shard.name())
                    .filter(name -> !kept.contains(name)).findFirst().orElseThrow();
            // the scheduler answers within its 10 s read bound every time while the drain waits (it would report no
            // shards and no session if it were the one waiting), the lock session survives, and b cannot take the
            // shard while a may still commit its page
            for (int i = 0; i < 5; i++) {
                assertThat(owned(a)).hasSize(1).doesNotContain(givenBack);
                assertThat(lockSession(a)).isEqualTo(session);
                assertThat(owned(b)).doesNotContain(givenBack);
            }
            release.countDown();
            await().atMost(WAIT).until(() -> owned(b).contains(givenBack));
            assertThat(owned(a)).hasSize(1).doesNotContain(givenBack);
            a.waitForNonStaleProjectionData(WAIT);
            b.waitForNonStaleProjectionData(WAIT);
        } finally {
            release.countDown();
        }
    }

    @Test
    void twoNodesSplitTheShardsAndEachShardRunsOnExactlyOne() {
        TestDatabase db = database("hc2");
        DocumentStore a = node(db, "a", 4, true);
        DocumentStore b = node(db, "b", 4, true);
        await().atMost(WAIT).until(() -> owned(a).size() == 2 && owned(b).size() == 2);
        Set<String> union = new HashSet<>(owned(a));
        union.addAll(owned(b));
        assertThat(union).hasSize(4);

        appendTicks(a, "s", 30);
        a.waitForNonStaleProjectionData(WAIT);
        b.waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(4, sequences(a, "s"));
    }

    @Test
    void tenantShardsThatAppearWhileRunningAreSplitAndEachRunsOnExactlyOneNode() {
        TestDatabase db = database("hctenants");
        List<DocumentStore> nodes = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            StoreOptions options = fastDaemon(db).dataSource(db.newPool(name));
            options.events().partitionByTenant(true);
            options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100))
                    .monitoringInterval(Duration.ofMillis(300)).probeTimeout(Duration.ofMillis(200));
            options.projections().add(new Counting("Count0"), Lifecycle.ASYNC);
            DocumentStore store = Ferret.createStore(options);
            toClose.add(0, store);
            nodes.add(store);
        }
        List<Long> sequences = new ArrayList<>();
        for (String tenant : List.of("t1", "t2", "t3", "t4")) {
            try (var session = nodes.get(0).openSession(tenant)) {
                for (int i = 0; i < 12; i++) {
                    session.events().append("s", new DaemonFixtures.Tick(i));
                }
                session.saveChanges();
            }
            nodes.get(0).querySession(tenant).fetchStream("s").forEach(e -> sequences.add(e.sequence()));
        }
        await().atMost(WAIT).until(() -> owned(nodes.get(0)).size() == 2 && owned(nodes.get(1)).size() == 2);
        Set<String> union = new HashSet<>(owned(nodes.get(0)));
        union.addAll(owned(nodes.get(1)));
        assertThat(union).containsExactlyInAnyOrder("Count0:All@t1", "Count0:All@t2", "Count0:All@t3",
                "Count0:All@t4");
        // status says, for every shard, its projection, its tenant and whether this node runs it
        for (DocumentStore node : nodes) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(node.daemon().status().shards().stream()
                    .filter(ShardStatus::runsHere).map(ShardStatus::name)).containsExactlyInAnyOrderElementsOf(
                    owned(node)));
            assertThat(node.daemon().status().shards()).allSatisfy(shard -> {
                assertThat(shard.projection()).isEqualTo("Count0");
                assertThat(shard.name()).isEqualTo("Count0:All@" + shard.tenantId());
            });
            assertThat(node.daemon().nodeName()).isNotEqualTo("solo");
            assertThat(node.daemon().nodes()).containsKeys(nodes.get(0).daemon().nodeName(),
                    nodes.get(1).daemon().nodeName());
        }
        nodes.get(0).waitForNonStaleProjectionData(WAIT);
        nodes.get(1).waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(1, sequences);
    }

    @Test
    void aKilledLockSessionStopsItsShardsAndTheShardRunsOnOneNodeAgain() {
        TestDatabase db = database("hckill");
        DocumentStore a = node(db, "a", 1, true);
        DocumentStore b = node(db, "b", 1, true);
        await().atMost(WAIT).until(() -> owned(a).size() + owned(b).size() == 1);
        DocumentStore holder = owned(a).isEmpty() ? b : a;
        appendTicks(holder, "k", 10);
        holder.waitForNonStaleProjectionData(WAIT);

        long killed = lockSession(holder);
        db.killSession(killed);
        // the monitor notices within monitoringInterval + probeTimeout and stops the shard; the node may have taken
        // it again on a new session before this looks, so a session other than the killed one counts as noticed
        await().atMost(WAIT).until(() -> holder.daemon().status().shards().get(0).state() == ShardState.STOPPED
                || lockSession(holder) != killed);
        await().atMost(WAIT).until(() -> owned(a).size() + owned(b).size() == 1);

        appendTicks(holder, "k", 10);
        DocumentStore owner = owned(a).isEmpty() ? b : a;
        owner.waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(1, sequences(owner, "k"));
    }

    @Test
    void aPageSlowerThanTheMonitorCycleKeepsItsLockAgainstABusyNode() throws Exception {
        TestDatabase db = database("hcslow");
        DocumentStore a = node(db, "a", 1, true);
        await().atMost(WAIT).until(() -> owned(a).size() == 1);
        DocumentStore b = node(db, "b", 1, true);
        slowPages = new CountDownLatch(1);
        appendTicks(b, "slow", 5);
        // the page is now held longer than several monitor cycles while b keeps trying for the lock
        await().atMost(WAIT).until(() -> applications.isEmpty() && a.daemon().status().highWaterMark().mark() >= 5);
        // for five monitoring intervals of 300 ms a keeps its lock and b never gets it: upkeep does not wait behind
        // the page
        await().during(Duration.ofMillis(1_500)).atMost(WAIT)
                .until(() -> owned(a).size() == 1 && owned(b).isEmpty());
        slowPages.countDown();
        a.waitForNonStaleProjectionData(WAIT);
        assertEachEventAppliedOnce(1, sequences(a, "slow"));
        assertThat(owned(b)).isEmpty();
    }

    @Test
    void withoutTheMonitorAKilledSessionLeavesBothNodesRunningTheShard() {
        TestDatabase db = database("hcsplit");
        DocumentStore a = node(db, "a", 1, false);
        DocumentStore b = node(db, "b", 1, false);
        await().atMost(WAIT).until(() -> owned(a).size() + owned(b).size() == 1);
        DocumentStore holder = owned(a).isEmpty() ? b : a;
        DocumentStore other = holder == a ? b : a;

        db.killSession(lockSession(holder));
        // nobody tells the holder; the other node finds the lock free and takes the shard too: split brain
        await().atMost(WAIT).until(() -> owned(other).size() == 1);
        assertThat(owned(holder)).hasSize(1);
        assertThat(holder.daemon().status().shards().get(0).state()).isEqualTo(ShardState.RUNNING);
    }

    @Test
    void threeNodesStartingAtOnceOnAFreshSchemaSplitTheShardsWithoutErrors() throws Exception {
        TestDatabase db = database("hc3");
        CyclicBarrier barrier = new CyclicBarrier(3);
        List<CompletableFuture<DocumentStore>> starts = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            starts.add(CompletableFuture.supplyAsync(() -> {
                try {
                    barrier.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return node(db, name, 3, true);
            }));
        }
        List<DocumentStore> nodes = new ArrayList<>();
        for (CompletableFuture<DocumentStore> start : starts) {
            nodes.add(start.get(120, TimeUnit.SECONDS));
        }
        await().atMost(WAIT).until(() -> nodes.stream().allMatch(n -> owned(n).size() == 1));
        Set<String> union = new HashSet<>();
        nodes.forEach(n -> union.addAll(owned(n)));
        assertThat(union).hasSize(3);
        appendTicks(nodes.get(0), "t", 5);
        for (DocumentStore n : nodes) {
            n.waitForNonStaleProjectionData(WAIT);
            assertThat(n.daemon().status().healthy()).isTrue();
        }
        assertEachEventAppliedOnce(3, sequences(nodes.get(0), "t"));
    }
}
