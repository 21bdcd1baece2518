package dev.ferret.runtime.subscriptions;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("conformance")
class SubscriptionConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A notice document per delivered tick, written through the page's session. */
    public record Notice(String id, int n) {
    }

    /** Records deliveries and post-commit calls; can fail, block or mark events bad on demand. */
    public static class Recorder extends SubscriptionBase {
        final Map<Long, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        final AtomicInteger pages = new AtomicInteger();
        final AtomicInteger postCommits = new AtomicInteger();
        final AtomicInteger postCommittedEvents = new AtomicInteger();
        volatile int transientFailuresLeft;
        volatile boolean blockUntilCancelled;
        final CountDownLatch blocked = new CountDownLatch(1);

        public Recorder() {
        }

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation)
                throws Exception {
            pages.incrementAndGet();
            for (EventEnvelope event : page.events()) {
                deliveries.computeIfAbsent(event.sequence(), k -> new AtomicInteger()).incrementAndGet();
                if (event.data() instanceof Poison poison) {
                    controller.markBad(event, new IllegalStateException("poison: " + poison.why()));
                    continue;
                }
                operations.store(new Notice(event.streamId() + "-" + event.version(), ((Tick) event.data()).n()));
            }
            if (blockUntilCancelled && !page.events().isEmpty()) {
                blocked.countDown();
                while (!cancellation.isCancelled()) {
                    Thread.sleep(10);
                }
                throw new InterruptedException("cancelled");
            }
            if (transientFailuresLeft > 0) {
                transientFailuresLeft--;
                throw new SQLTransientConnectionException("injected after the writes", "08006");
            }
            int events = page.events().size();
            return () -> {
                postCommits.incrementAndGet();
                postCommittedEvents.addAndGet(events);
            };
        }
    }

    private static StoreOptions options(TestDatabase db, SubscriptionBase subscription) {
        StoreOptions options = fastDaemon(db);
        options.documents().register(Notice.class);
        options.projections().subscribe(subscription);
        return options;
    }

    private static long notices(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_notice"));
    }

    @Test
    void writesCommitWithProgressionAndATransientFailureIsRetriedWithoutFiringTheListenerTwice() {
        try (TestDatabase db = TestDatabase.create("subatomic")) {
            Recorder recorder = new Recorder();
            recorder.transientFailuresLeft = 2;
            try (DocumentStore store = Ferret.createStore(options(db, recorder))) {
                appendTicks(store, "s", 10);
                await().atMost(WAIT).until(() -> recorder.postCommittedEvents.get() == 10);
                assertThat(notices(db)).isEqualTo(10);
                // two attempts rolled back their writes; only the committed one fired its listener
                assertThat(recorder.deliveries.values()).allSatisfy(count -> assertThat(count).hasValue(3));
                assertThat(recorder.postCommits).hasValue(1);
                assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                        + " WHERE name = 'Recorder:All'")).isEqualTo(store.querySession().fetchStream("s").get(9)
                        .sequence());
            }
        }
    }

    @Test
    void aTypeFilterDeliversOnlyThatTypeAndPagesStillAdvance() {
        try (TestDatabase db = TestDatabase.create("subfilter")) {
            Recorder recorder = new Recorder();
            recorder.includeType(Tick.class).name("ticks-only");
            try (DocumentStore store = Ferret.createStore(options(db, recorder))) {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("p", new Poison("not for this one"), new Poison("nor this"));
                    session.saveChanges();
                }
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(recorder.deliveries).isEmpty();
                assertThat(store.daemon().status().shard("ticks-only:All").orElseThrow().lag()).isZero();
                appendTicks(store, "t", 3);
                await().atMost(WAIT).until(() -> recorder.postCommittedEvents.get() == 3);
                assertThat(recorder.deliveries).hasSize(3);
            }
        }
    }

    @Test
    void aPageCancelledByTheDrainBoundIsDeliveredAgainByTheNextRun() throws Exception {
        try (TestDatabase db = TestDatabase.create("subdrain")) {
            Recorder first = new Recorder();
            first.blockUntilCancelled = true;
            StoreOptions options = options(db, first);
            options.daemon().stopAndDrainTimeout(Duration.ofMillis(300));
            DocumentStore store = Ferret.createStore(options);
            appendTicks(store, "d", 4);
            assertThat(first.blocked.await(30, TimeUnit.SECONDS)).isTrue();
            store.close();
            assertThat(first.postCommits).hasValue(0);
            assertThat(notices(db)).isZero();

            Recorder second = new Recorder();
            try (DocumentStore restarted = Ferret.createStore(options(db, second))) {
                await().atMost(WAIT).until(() -> second.postCommittedEvents.get() == 4);
                assertThat(notices(db)).isEqualTo(4);
                assertThat(second.deliveries.keySet()).isEqualTo(first.deliveries.keySet());
            }
        }
    }

    @Test
    void poisonEventsGoToTheDeadLettersWithSkipApplyErrorsAndPauseTheShardWithout() {
        try (TestDatabase db = TestDatabase.create("subdead")) {
            Recorder skipping = new Recorder();
            StoreOptions options = options(db, skipping);
            options.daemon().skipApplyErrors(true);
            try (DocumentStore store = Ferret.createStore(options)) {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("x", new Tick(1), new Poison("bad"), new Tick(3));
                    session.saveChanges();
                }
                await().atMost(WAIT).until(() -> skipping.postCommittedEvents.get() == 3);
                assertThat(notices(db)).isEqualTo(2);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters")
                        + " WHERE projection = 'Recorder:All' AND type = 'Poison'")).isOne();
            }
        }
        try (TestDatabase db = TestDatabase.create("subpause")) {
            Recorder pausing = new Recorder();
            try (DocumentStore store = Ferret.createStore(options(db, pausing))) {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("x", new Tick(1), new Poison("bad"));
                    session.saveChanges();
                }
                await().atMost(WAIT).until(() -> store.daemon().status().shard("Recorder:All").orElseThrow()
                        .state() == ShardState.PAUSED);
                assertThat(store.daemon().status().shard("Recorder:All").orElseThrow().error())
                        .isInstanceOf(ApplyFailedException.class).hasMessageContaining("Poison");
                assertThat(notices(db)).isZero();
                assertThat(pausing.postCommits).hasValue(0);
            }
        }
    }

    /** Marks poison bad twice, swallows what markBad throws, and stores a notice for every other event. */
    public static class Swallower extends SubscriptionBase {
        final AtomicInteger marks = new AtomicInteger();

        public Swallower() {
        }

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            for (EventEnvelope event : page.events()) {
                if (event.data() instanceof Poison poison) {
                    for (int i = 0; i < 2; i++) {
                        try {
                            marks.incrementAndGet();
                            controller.markBad(event, new IllegalStateException("poison: " + poison.why()));
                        } catch (RuntimeException swallowed) {
                            // the subscription carries on regardless
                        }
                    }
                    continue;
                }
                operations.store(new Notice(event.streamId() + "-" + event.version(), ((Tick) event.data()).n()));
            }
            return PostCommitListener.NONE;
        }
    }

    private static long deadLetters(TestDatabase db, String shard) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters") + " WHERE projection = '" + shard
                + "'");
    }

    @Test
    void aSubscriptionThatSwallowsMarkBadStillPausesTheShardAtThatEventWithoutSkipApplyErrors() {
        try (TestDatabase db = TestDatabase.create("subswallow")) {
            Swallower swallower = new Swallower();
            try (DocumentStore store = Ferret.createStore(options(db, swallower))) {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("x", new Tick(1), new Poison("bad"), new Tick(3));
                    session.saveChanges();
                }
                long poisonSequence = store.querySession().fetchStream("x").get(1).sequence();
                await().atMost(WAIT).until(() -> store.daemon().status().shard("Swallower:All").orElseThrow()
                        .state() == ShardState.PAUSED);
                var shard = store.daemon().status().shard("Swallower:All").orElseThrow();
                assertThat(shard.error()).isInstanceOf(ApplyFailedException.class)
                        .hasMessageContaining("'Swallower:All'").hasMessageContaining("Poison")
                        .hasMessageContaining("sequence " + poisonSequence).hasMessageContaining("stream 'x'");
                assertThat(((ApplyFailedException) shard.error()).sequence()).isEqualTo(poisonSequence);
                assertThat(shard.progression()).isLessThan(poisonSequence);
                assertThat(swallower.marks.get()).isGreaterThanOrEqualTo(2);
                // the page rolled back: neither its writes nor a dead letter committed
                assertThat(notices(db)).isZero();
                assertThat(deadLetters(db, "Swallower:All")).isZero();
            }
        }
    }

    @Test
    void aSubscriptionThatSwallowsMarkBadGetsExactlyOneDeadLetterAndMovesOnWithSkipApplyErrors() {
        try (TestDatabase db = TestDatabase.create("subswallowskip")) {
            Swallower swallower = new Swallower();
            StoreOptions options = options(db, swallower);
            options.daemon().skipApplyErrors(true);
            try (DocumentStore store = Ferret.createStore(options)) {
                try (DocumentSession session = store.openSession()) {
                    session.events().append("x", new Tick(1), new Poison("bad"), new Tick(3));
                    session.saveChanges();
                }
                appendTicks(store, "after", 2);
                store.waitForNonStaleProjectionData(WAIT);
                var shard = store.daemon().status().shard("Swallower:All").orElseThrow();
                assertThat(shard.state()).isEqualTo(ShardState.RUNNING);
                assertThat(shard.lag()).isZero();
                assertThat(notices(db)).isEqualTo(4);
                assertThat(deadLetters(db, "Swallower:All")).isOne();
                assertThat(db.queryLong("SELECT seq_id FROM " + db.table("pc_dead_letters")
                        + " WHERE projection = 'Swallower:All'"))
                        .isEqualTo(store.querySession().fetchStream("x").get(1).sequence());
            }
        }
    }

    /**
     * For each event writes a notice for its own tenant, for its neighbour ({@code near} of a tenant of the far
     * database, {@code local} otherwise), for {@code local} and for the default tenant; records each refusal.
     */
    public static class CrossTenantWriter extends SubscriptionBase {
        final List<String> refusals = new java.util.concurrent.CopyOnWriteArrayList<>();

        public CrossTenantWriter() {
        }

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            for (EventEnvelope event : page.events()) {
                String id = event.tenantId() + "-" + event.streamId() + "-" + event.version();
                controller.operationsFor(event.tenantId()).store(new Notice(id, 1));
                String neighbour = event.tenantId().startsWith("remote") ? "remote-2" : "local";
                attempt(() -> controller.operationsFor(neighbour).store(new Notice("from-" + id, 2)));
                attempt(() -> controller.operationsFor("local").store(new Notice("local-from-" + id, 3)));
                attempt(() -> operations.store(new Notice("default-from-" + id, 4)));
            }
            return PostCommitListener.NONE;
        }

        private void attempt(Runnable write) {
            try {
                write.run();
            } catch (IllegalStateException refused) {
                refusals.add(refused.getMessage());
            }
        }
    }

    @Test
    void otherTenantsOperationsGoThroughThePageWhenTheyShareItsDatabaseAndAreRefusedOtherwise() {
        try (TestDatabase db = TestDatabase.create("subtenants");
             TestDatabase far = db.sibling("far")) {
            CrossTenantWriter writer = new CrossTenantWriter();
            StoreOptions options = options(db, writer);
            options.events().partitionByTenant(true);
            options.tenancy().database("far", far.dataSource(), "remote-1", "remote-2");
            try (DocumentStore store = Ferret.createStore(options)) {
                for (String tenant : List.of("local", "remote-1")) {
                    try (DocumentSession session = store.openSession(tenant)) {
                        session.events().append("s", new Tick(1));
                        session.saveChanges();
                    }
                }
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(store.daemon().status().shard("CrossTenantWriter:All@remote-1").orElseThrow().state())
                        .isEqualTo(ShardState.RUNNING);

                // the local page, in the store's own database, writes for every tenant living there
                assertThat(store.querySession("local").load(Notice.class, "local-s-1")).isPresent();
                assertThat(store.querySession("local").load(Notice.class, "from-local-s-1")).isPresent();
                assertThat(store.querySession().load(Notice.class, "default-from-local-s-1")).isPresent();
                // the remote page writes its own and its database neighbour's documents
                assertThat(store.querySession("remote-1").load(Notice.class, "remote-1-s-1")).isPresent();
                assertThat(store.querySession("remote-2").load(Notice.class, "from-remote-1-s-1")).isPresent();
                // and is refused the tenants of the store's own database, naming the tenant and both databases
                assertThat(writer.refusals).hasSize(2).allSatisfy(message -> assertThat(message)
                        .contains("'CrossTenantWriter:All@remote-1'").contains("database 'far'")
                        .contains("database '" + StoreOptions.DEFAULT_DATABASE + "'"));
                assertThat(writer.refusals).anySatisfy(m -> assertThat(m).contains("tenant 'local'"))
                        .anySatisfy(m -> assertThat(m).contains("tenant '" + StoreOptions.DEFAULT_TENANT + "'"));
                // nothing landed in the wrong database
                assertThat(far.queryLong("SELECT COUNT(*) FROM " + far.table("pc_doc_notice")
                        + " WHERE tenant_id NOT IN ('remote-1', 'remote-2')")).isZero();
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_notice")
                        + " WHERE tenant_id IN ('remote-1', 'remote-2')")).isZero();
                assertThat(notices(db)).isEqualTo(4);
                assertThat(far.queryLong("SELECT COUNT(*) FROM " + far.table("pc_doc_notice"))).isEqualTo(2);
            }
        }
    }

    @Test
    void subscribeFromPresentIgnoresHistory() {
        try (TestDatabase db = TestDatabase.create("subpresent")) {
            StoreOptions writerOptions = fastDaemon(db);
            writerOptions.daemon().mode(DaemonMode.DISABLED);
            try (DocumentStore writer = Ferret.createStore(writerOptions)) {
                appendTicks(writer, "h", 5);
                Recorder recorder = new Recorder();
                recorder.subscribeFromPresent();
                try (DocumentStore store = Ferret.createStore(options(db, recorder))) {
                    await().atMost(WAIT).until(() -> store.daemon().status().shard("Recorder:All").orElseThrow()
                            .progression() >= 5);
                    appendTicks(writer, "h", 3);
                    await().atMost(WAIT).until(() -> recorder.postCommittedEvents.get() == 3);
                    assertThat(recorder.deliveries).hasSize(3);
                }
            }
        }
    }

    @Test
    void aRebuildOfASubscriptionFromThePresentRestartsItAtThePresent() {
        try (TestDatabase db = TestDatabase.create("subpresentrebuild")) {
            Recorder recorder = new Recorder();
            recorder.subscribeFromPresent();
            try (DocumentStore store = Ferret.createStore(options(db, recorder))) {
                // history before the shard started: it starts past it
                appendTicks(store, "h", 1);
                await().atMost(WAIT).until(() -> store.daemon().status().shard("Recorder:All").orElseThrow()
                        .progression() >= 1);
                recorder.postCommittedEvents.set(0);
                recorder.deliveries.clear();
                appendTicks(store, "h", 2);
                await().atMost(WAIT).until(() -> recorder.postCommittedEvents.get() == 2);
                store.daemon().rebuild("Recorder", WAIT);
                assertThat(store.daemon().status().shard("Recorder:All").orElseThrow().state())
                        .isEqualTo(ShardState.RUNNING);
                appendTicks(store, "h", 3);
                await().atMost(WAIT).until(() -> recorder.postCommittedEvents.get() == 5);
                assertThat(recorder.deliveries).as("nothing of the history delivered again").hasSize(5);
            }
        }
    }

    @Test
    void subscriptionsAreNamedOnceAndCanBeRegisteredByType() {
        StoreOptions options = new StoreOptions();
        options.projections().subscribe(Recorder.class, s -> s.name("shipments"));
        assertThat(options.projections().subscriptions()).extracting(SubscriptionBase::name)
                .containsExactly("shipments");
        assertThatThrownBy(() -> options.projections().subscribe(new Recorder(), s -> s.name("shipments")))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'shipments'");
        assertThatThrownBy(() -> new Recorder().name("bad name")).isInstanceOf(IllegalArgumentException.class);
        List<SubscriptionBase> unnamed = List.of(new Recorder());
        assertThat(unnamed.get(0).name()).isEqualTo("Recorder");
    }
}
