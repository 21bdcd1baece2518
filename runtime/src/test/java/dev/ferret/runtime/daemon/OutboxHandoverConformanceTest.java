package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.OutboxMessage;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Published side effects survive the ordinary ways a shard stops running: a planned stop delivers what its pages
 * committed within the drain bound, and rows of a shard nobody runs any more (a retired blue/green version, a
 * tenant's shard not started since a restart) are delivered by the store's sweep, under HotCold by the one node that
 * takes the retired shard's lock. Each test counts delivered messages by the sequence of the event that published
 * them and asserts every committed event's message arrived, duplicates allowed.
 */
@Tag("conformance")
class OutboxHandoverConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A published side effect: the version that published it and the sequence of its event. */
    public record Effect(int version, long sequence) {
    }

    /** The document of a second projection. */
    public record Seen(String id, long count) {
    }

    /** Delivered effects by version, then sequence; and every delivery's message id. */
    private final Set<String> deliveredIds = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<Integer, Set<Long>> delivered = new ConcurrentHashMap<>();

    private static Snapshot<Tally> publishing(int version) {
        return Snapshot.of("Handover", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()))
                .apply(Poison.class, (doc, e) -> {
                    throw new IllegalStateException("version " + version + " cannot apply " + e.why());
                })
                .raiseSideEffects((doc, event, fx) -> {
                    if (event.data() instanceof Tick) {
                        fx.publish(new Effect(version, event.sequence()));
                    }
                })
                .withVersion(version)
                .gateSideEffectsBehindPriorVersion(version > 1);
    }

    /** A node running {@code version}, whose publisher refuses while {@code brokerDown} is set. */
    private StoreOptions node(TestDatabase db, int version, AtomicBoolean brokerDown) {
        StoreOptions options = fastDaemon(db);
        options.projections().add(publishing(version), Lifecycle.ASYNC).publishMessages(message -> {
            if (brokerDown.get()) {
                throw new IllegalStateException("broker down");
            }
            Effect effect = (Effect) message.payload();
            deliveredIds.add(message.id());
            delivered.computeIfAbsent(effect.version(), v -> ConcurrentHashMap.newKeySet()).add(effect.sequence());
        });
        return options;
    }

    private Set<Long> deliveredOf(int version) {
        return delivered.getOrDefault(version, Set.of());
    }

    private static Set<Long> sequences(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().collect(Collectors.toSet());
    }

    private static void appendTicks(DocumentStore store, int streams, int each) {
        try (DocumentSession session = store.openSession()) {
            for (int s = 0; s < streams; s++) {
                for (int i = 1; i <= each; i++) {
                    session.events().append("trip-" + s, new Tick(i));
                }
            }
            session.saveChanges();
        }
    }

    private static long undelivered(TestDatabase db, String shard) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox") + " WHERE delivered_at IS NULL"
                + " AND shard = '" + shard + "'");
    }

    @Test
    void aPlannedStopDeliversWhatItsCommittedPagesPublishedBeforeItReturns() throws Exception {
        CountDownLatch closing = new CountDownLatch(1);
        AtomicBoolean firstHeld = new AtomicBoolean();
        try (TestDatabase db = TestDatabase.create("handoverstop")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().stopAndDrainTimeout(Duration.ofSeconds(30));
            // a second shard gives the daemon a second worker: the held delivery keeps one, the page loop the other
            options.projections().add(Snapshot.of("Seen", Seen.class)
                    .create(Tick.class, (id, e) -> new Seen(id, 1))
                    .apply(Tick.class, (doc, e) -> new Seen(doc.id(), doc.count() + 1)), Lifecycle.ASYNC);
            options.projections().add(publishing(1), Lifecycle.ASYNC).publishMessages(message -> {
                // the first delivery waits until the store is closing, so every later row is still pending then
                if (firstHeld.compareAndSet(false, true)) {
                    try {
                        closing.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                delivered.computeIfAbsent(1, v -> ConcurrentHashMap.newKeySet())
                        .add(((Effect) message.payload()).sequence());
            });
            DocumentStore store = Ferret.createStore(options);
            appendTicks(store, 10, 30);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(undelivered(db, "Handover:All")).isGreaterThan(1);

            Thread closer = new Thread(store::close, "closer");
            closer.start();
            await().atMost(WAIT).until(() -> !store.daemon().status().running());
            closing.countDown();
            closer.join(WAIT.toMillis());
            assertThat(closer.isAlive()).isFalse();

            assertThat(deliveredOf(1)).containsAll(sequences(1, 300));
            assertThat(undelivered(db, "Handover:All")).isZero();
        }
    }

    @Test
    void aRetiredVersionsUndeliveredMessagesAreDeliveredByTheDeploymentThatReplacedIt() {
        AtomicBoolean brokerDown = new AtomicBoolean(true);
        try (TestDatabase db = TestDatabase.create("handoverretired")) {
            try (DocumentStore blue = Ferret.createStore(node(db, 1, brokerDown))) {
                appendTicks(blue, 10, 50);
                blue.waitForNonStaleProjectionData(WAIT);
            }
            assertThat(undelivered(db, "Handover:All")).isEqualTo(500);

            StoreOptions greenOptions = node(db, 2, brokerDown);
            greenOptions.daemon().stalledShardThreshold(Duration.ofMillis(300));
            try (DocumentStore green = Ferret.createStore(greenOptions)) {
                green.waitForNonStaleProjectionData(WAIT);
                // while the broker is down the swept rows show in the store-wide outbox, and in health once stuck
                await().atMost(WAIT).untilAsserted(() -> {
                    DaemonStatus status = green.daemon().status();
                    assertThat(status.sweptOutboxes().undelivered()).isEqualTo(500);
                    assertThat(status.outbox().undelivered()).isEqualTo(500);
                    assertThat(status.healthy()).isFalse();
                    assertThat(status.live()).isTrue();
                    assertThat(status.problems()).anySatisfy(p -> assertThat(p).contains("no agent here runs")
                            .contains("500 messages"));
                });
                brokerDown.set(false);
                await().atMost(WAIT).until(() -> deliveredOf(1).size() == 500);
                assertThat(deliveredOf(1)).isEqualTo(sequences(1, 500));
                // the gate held v2's replay back: v1 had published those events
                assertThat(deliveredOf(2)).isEmpty();

                appendTicks(green, 1, 5);
                await().atMost(WAIT).until(() -> deliveredOf(2).size() == 5);
                await().atMost(WAIT).until(() -> undelivered(db, "Handover:All") == 0);
                await().atMost(WAIT).until(() -> green.daemon().status().healthy());
                assertThat(green.daemon().status().outbox().undelivered()).isZero();
            }
        }
    }

    @Test
    void v1ThenV2ThenV3DeliverEveryCommittedMessageOfEachVersion() {
        AtomicBoolean brokerDown = new AtomicBoolean(true);
        try (TestDatabase db = TestDatabase.create("handoverthree")) {
            try (DocumentStore v1 = Ferret.createStore(node(db, 1, brokerDown))) {
                appendTicks(v1, 4, 50);
                v1.waitForNonStaleProjectionData(WAIT);
            }
            try (DocumentStore v2 = Ferret.createStore(node(db, 2, brokerDown))) {
                v2.waitForNonStaleProjectionData(WAIT);
                appendTicks(v2, 4, 25);
                v2.waitForNonStaleProjectionData(WAIT);
            }
            assertThat(undelivered(db, "Handover:All")).isEqualTo(200);
            assertThat(undelivered(db, "Handover:V2:All")).isEqualTo(100);

            brokerDown.set(false);
            try (DocumentStore v3 = Ferret.createStore(node(db, 3, brokerDown))) {
                v3.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> deliveredOf(1).size() == 200 && deliveredOf(2).size() == 100);
                assertThat(deliveredOf(1)).isEqualTo(sequences(1, 200));
                assertThat(deliveredOf(2)).isEqualTo(sequences(201, 300));
                assertThat(deliveredOf(3)).isEmpty();
            }
        }
    }

    @Test
    void aPoisonEventInTheWarmUpPausesTheNewVersionAndTheOldVersionsMessagesStillArrive() {
        AtomicBoolean brokerDown = new AtomicBoolean(true);
        try (TestDatabase db = TestDatabase.create("handoverpoison")) {
            StoreOptions blueOptions = node(db, 1, brokerDown);
            try (DocumentStore blue = Ferret.createStore(blueOptions)) {
                appendTicks(blue, 2, 40);
                blue.waitForNonStaleProjectionData(WAIT);
                // v1 pauses on the poison too; everything before it committed and published
                try (DocumentSession session = blue.openSession()) {
                    session.events().append("trip-0", new Poison("a bad event"));
                    session.saveChanges();
                }
                await().atMost(WAIT).until(() -> blue.daemon().status().shard("Handover:All").orElseThrow()
                        .state() == ShardState.PAUSED);
            }
            brokerDown.set(false);
            try (DocumentStore green = Ferret.createStore(node(db, 2, brokerDown))) {
                await().atMost(WAIT).until(() -> green.daemon().status().shard("Handover:V2:All").orElseThrow()
                        .state() == ShardState.PAUSED);
                await().atMost(WAIT).until(() -> deliveredOf(1).size() == 80);
                assertThat(deliveredOf(1)).isEqualTo(sequences(1, 80));
            }
        }
    }

    @Test
    void aTenantsShardOfARetiredVersionIsSweptInItsOwnTenantsRows() {
        AtomicBoolean brokerDown = new AtomicBoolean(true);
        try (TestDatabase db = TestDatabase.create("handovertenant")) {
            StoreOptions blueOptions = node(db, 1, brokerDown);
            blueOptions.events().partitionByTenant(true);
            try (DocumentStore blue = Ferret.createStore(blueOptions)) {
                for (String tenant : List.of("t1", "t2")) {
                    try (DocumentSession session = blue.openSession(tenant)) {
                        for (int i = 1; i <= 20; i++) {
                            session.events().append("trip", new Tick(i));
                        }
                        session.saveChanges();
                    }
                }
                blue.waitForNonStaleProjectionData(WAIT);
            }
            assertThat(undelivered(db, "Handover:All@t1") + undelivered(db, "Handover:All@t2")).isEqualTo(40);

            brokerDown.set(false);
            StoreOptions greenOptions = node(db, 2, brokerDown);
            greenOptions.events().partitionByTenant(true);
            try (DocumentStore green = Ferret.createStore(greenOptions)) {
                // no tenant appends again, so no tenant shard starts: the sweep alone delivers
                await().atMost(WAIT).until(() -> deliveredOf(1).size() == 40);
                assertThat(undelivered(db, "Handover:All@t1") + undelivered(db, "Handover:All@t2")).isZero();
            }
        }
    }

    @Test
    void underHotColdOneSurvivingNodeTakesTheRetiredShardsLockAndDeliversItsRows() {
        AtomicBoolean brokerDown = new AtomicBoolean(true);
        try (TestDatabase db = TestDatabase.create("handoverhotcold")) {
            try (DocumentStore blue = Ferret.createStore(hotCold(node(db, 1, brokerDown), db, "blue"))) {
                appendTicks(blue, 5, 40);
                blue.waitForNonStaleProjectionData(WAIT);
            }
            assertThat(undelivered(db, "Handover:All")).isEqualTo(200);

            brokerDown.set(false);
            try (DocumentStore green1 = Ferret.createStore(hotCold(node(db, 2, brokerDown), db, "green-1"));
                 DocumentStore green2 = Ferret.createStore(hotCold(node(db, 2, brokerDown), db, "green-2"))) {
                await().atMost(WAIT).until(() -> deliveredOf(1).size() == 200);
                assertThat(deliveredOf(1)).isEqualTo(sequences(1, 200));
                await().atMost(WAIT).until(() -> undelivered(db, "Handover:All") == 0);
                // one node swept the shard: each row went out under one id, once per delivery
                assertThat(deliveredIds).hasSize(200);
                assertThat(green1.daemon().status().running()).isTrue();
                assertThat(green2.daemon().status().running()).isTrue();
            }
        }
    }

    private static StoreOptions hotCold(StoreOptions options, TestDatabase db, String node) {
        options.dataSource(db.newPool(node));
        options.daemon().mode(DaemonMode.HOT_COLD)
                .lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300))
                .probeTimeout(Duration.ofMillis(200));
        return options;
    }
}
