package dev.ferret.runtime.versions;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Blue/green versions with separate storage, and side effects gated behind the prior version's mark. */
@Tag("conformance")
class VersionsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A side effect: which version saw which event. */
    public record Effect(int version, long sequence) {
    }

    private final Map<Long, AtomicInteger> effects = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> effectsByVersion = new ConcurrentHashMap<>();
    private volatile CountDownLatch holdFirstPage;
    /** Pages hold only once the document has counted this many events. */
    private volatile long holdFromCount;
    private final CountDownLatch held = new CountDownLatch(1);

    private Snapshot<Tally> trips(int version, boolean gate) {
        return Snapshot.of("Trips", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> {
                    CountDownLatch hold = holdFirstPage;
                    if (hold != null && doc.count() >= holdFromCount) {
                        held.countDown();
                        try {
                            hold.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException interrupted) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException("stopped mid-page", interrupted);
                        }
                    }
                    return new Tally(doc.id(), doc.count() + 1, e.n());
                })
                .apply(Poison.class, (doc, e) -> {
                    if (version > 1) {
                        throw new IllegalStateException("version " + version + " cannot apply " + e.why());
                    }
                    return doc;
                })
                .raiseSideEffects((doc, event, fx) -> fx.publish(new Effect(version, event.sequence())))
                .withVersion(version)
                .gateSideEffectsBehindPriorVersion(gate);
    }

    private StoreOptions node(TestDatabase db, Snapshot<Tally> projection) {
        StoreOptions options = fastDaemon(db);
        options.projections().add(projection, Lifecycle.ASYNC).publishPayloads(message -> {
            Effect effect = (Effect) message;
            effects.computeIfAbsent(effect.sequence(), k -> new AtomicInteger()).incrementAndGet();
            effectsByVersion.computeIfAbsent(effect.version(), k -> new AtomicInteger()).incrementAndGet();
        });
        return options;
    }

    private int effectsOf(int version) {
        return effectsByVersion.getOrDefault(version, new AtomicInteger()).get();
    }

    private static List<Long> sequences(DocumentStore store, String stream) {
        return store.querySession().fetchStream(stream).stream().map(EventEnvelope::sequence).toList();
    }

    @Test
    void v1ThenAGatedV2RebuildsItsOwnDocumentsAndFiresEachSideEffectExactlyOnce() {
        try (TestDatabase db = TestDatabase.create("bluegreen")) {
            try (DocumentStore blue = Ferret.createStore(node(db, trips(1, false)))) {
                appendTicks(blue, "trip-1", 20);
                blue.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> effectsOf(1) == 20);
            }
            try (DocumentStore green = Ferret.createStore(node(db, trips(2, true)))) {
                green.waitForNonStaleProjectionData(WAIT);
                assertThat(green.querySession().load(Tally.class, "trip-1").orElseThrow().count()).isEqualTo(20);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_tally_v2"))).isOne();
                assertThat(effectsOf(2)).isZero();

                appendTicks(green, "trip-1", 5);
                green.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> effectsOf(2) == 5);
                assertThat(green.querySession().load(Tally.class, "trip-1").orElseThrow().count()).isEqualTo(25);
                assertThat(sequences(green, "trip-1"))
                        .allSatisfy(sequence -> assertThat(effects.get(sequence)).as("effects of %d", sequence)
                                .hasValue(1));
            }
            // blue's documents stayed where blue reads them
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_tally"))).isOne();
        }
    }

    @Test
    void anInterruptedWarmUpResumesWithSideEffectsStillHeldBack() throws Exception {
        try (TestDatabase db = TestDatabase.create("warmresume")) {
            try (DocumentStore blue = Ferret.createStore(node(db, trips(1, false)))) {
                appendTicks(blue, "t", 120);
                blue.waitForNonStaleProjectionData(WAIT);
            }
            StoreOptions first = node(db, trips(2, true));
            first.daemon().stopAndDrainTimeout(Duration.ofMillis(300));
            // the first page (50 events) commits; the second holds, and the node stops mid-warm-up
            holdFromCount = 55;
            holdFirstPage = new CountDownLatch(1);
            DocumentStore interrupted = Ferret.createStore(first);
            assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(interrupted.daemon().status().shards().get(0).progression()).isEqualTo(50);
            interrupted.close();
            holdFirstPage = null;
            try (DocumentStore resumed = Ferret.createStore(node(db, trips(2, true)))) {
                resumed.waitForNonStaleProjectionData(WAIT);
                assertThat(resumed.querySession().load(Tally.class, "t").orElseThrow().count()).isEqualTo(120);
            }
            assertThat(effectsOf(2)).isZero();
        }
    }

    @Test
    void aWarmUpThatThrowsPausesTheShardAndFiresNothing() {
        try (TestDatabase db = TestDatabase.create("warmfail")) {
            try (DocumentStore blue = Ferret.createStore(node(db, trips(1, false)))) {
                appendTicks(blue, "t", 3);
                try (DocumentSession session = blue.openSession()) {
                    session.events().append("t", new Poison("v2 rejects it"));
                    session.saveChanges();
                }
                appendTicks(blue, "t", 3);
                blue.waitForNonStaleProjectionData(WAIT);
            }
            int blueEffects = effectsOf(1);
            try (DocumentStore green = Ferret.createStore(node(db, trips(2, true)))) {
                await().atMost(WAIT).until(() -> green.daemon().status().shards().get(0).state()
                        == ShardState.PAUSED);
                assertThat(green.daemon().status().shards().get(0).error()).hasMessageContaining("v2 rejects it");
            }
            assertThat(effectsOf(2)).isZero();
            assertThat(effectsOf(1)).isEqualTo(blueEffects);
        }
    }

    @Test
    void eventsRaisedAsSideEffectsAreAppendedAfterTheCommit() {
        try (TestDatabase db = TestDatabase.create("raised")) {
            StoreOptions options = fastDaemon(db);
            options.projections().add(Snapshot.of("Echo", Tally.class)
                    .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                    .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()))
                    .raiseSideEffects((doc, event, fx) -> {
                        if (event.data() instanceof Tick tick && !event.streamId().startsWith("echo-")) {
                            fx.appendEvent("echo-" + event.streamId(), new Tick(tick.n() * 10));
                        }
                    }), Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "src", 3);
                await().atMost(WAIT).until(() -> store.querySession().fetchStream("echo-src").size() == 3);
                assertThat(store.querySession().fetchStream("echo-src")).extracting(e -> ((Tick) e.data()).n())
                        .containsExactly(10, 20, 30);
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(store.querySession().load(Tally.class, "echo-src").orElseThrow().count()).isEqualTo(3);
            }
        }
    }

    @Test
    void withoutTheGateANewVersionFiresSideEffectsForItsWholeReplay() {
        try (TestDatabase db = TestDatabase.create("nogate")) {
            try (DocumentStore blue = Ferret.createStore(node(db, trips(1, false)))) {
                appendTicks(blue, "t", 10);
                blue.waitForNonStaleProjectionData(WAIT);
            }
            try (DocumentStore green = Ferret.createStore(node(db, trips(2, false)))) {
                green.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> effectsOf(2) == 10);
            }
            // version 1 with the gate on is inert too
            try (DocumentStore again = Ferret.createStore(node(db, trips(1, true)))) {
                appendTicks(again, "t", 1);
                again.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> effectsOf(1) == 11);
            }
        }
    }

    @Test
    void eventsTheOldVersionProcessesDuringTheWarmUpGetSideEffectsFromBoth() throws Exception {
        try (TestDatabase db = TestDatabase.create("overlap")) {
            DocumentStore blue = Ferret.createStore(node(db, trips(1, false)));
            try {
                appendTicks(blue, "t", 10);
                blue.waitForNonStaleProjectionData(WAIT);
                holdFirstPage = new CountDownLatch(1);
                CountDownLatch release = holdFirstPage;
                // green snapshots N = 10 and holds its first warm-up page; blue goes on past N meanwhile
                try (DocumentStore green = Ferret.createStore(node(db, trips(2, true)))) {
                    assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
                    holdFirstPage = null;
                    appendTicks(blue, "t", 4);
                    await().atMost(WAIT).until(() -> effectsOf(1) == 14);
                    release.countDown();
                    green.waitForNonStaleProjectionData(WAIT);
                    await().atMost(WAIT).until(() -> effectsOf(2) == 4);
                }
                List<Long> all = sequences(blue, "t");
                all.subList(0, 10).forEach(sequence -> assertThat(effects.get(sequence)).hasValue(1));
                all.subList(10, 14).forEach(sequence -> assertThat(effects.get(sequence)).as("overlap window")
                        .hasValue(2));
            } finally {
                blue.close();
            }
        }
    }
}
