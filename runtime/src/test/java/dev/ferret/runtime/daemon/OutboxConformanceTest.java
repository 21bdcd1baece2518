package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.OutboxStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.OutboxMessage;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.MutableClock;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.VirtualTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The durable side-effect outbox: messages commit with their page and are delivered after it, at least once and in
 * order per shard; raised events commit with their page; rebuilds and gated warm-ups write nothing; delivered rows
 * go after their retention. Runs on the configured database (H2 by default).
 */
@Tag("conformance")
class OutboxConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SHARD = "Outboxed:All";

    /** A published side effect: the sequence of the event that published it. */
    public record Effect(long sequence) {
    }

    /** An event a projection raises for each tick it applies. */
    public record Echo(long sequence) {
    }

    static Snapshot<Tally> outboxed(boolean raiseEvents) {
        return Snapshot.of("Outboxed", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()))
                .apply(Poison.class, (doc, e) -> {
                    throw new IllegalStateException("poisoned: " + e.why());
                })
                .raiseSideEffects((doc, event, fx) -> {
                    if (event.data() instanceof Tick) {
                        fx.publish(new Effect(event.sequence()));
                        if (raiseEvents) {
                            fx.appendEvent("echo-" + doc.id(), new Echo(event.sequence()));
                        }
                    }
                });
    }

    private static StoreOptions node(TestDatabase db, Snapshot<Tally> projection, List<OutboxMessage> delivered) {
        StoreOptions options = fastDaemon(db);
        options.events().register(Echo.class);
        options.projections().add(projection, Lifecycle.ASYNC).publishMessages(delivered::add);
        return options;
    }

    private static List<Long> sequencesOf(List<OutboxMessage> messages) {
        synchronized (messages) {
            return messages.stream().map(m -> ((Effect) m.payload()).sequence()).toList();
        }
    }

    private static long outboxRows(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox"));
    }

    @Test
    void messagesAreDeliveredInOrderWithTheirIdsAndMarkedDelivered() {
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outbox");
             DocumentStore store = Ferret.createStore(node(db, outboxed(false), delivered))) {
            appendTicks(store, "a", 12);
            store.waitForNonStaleProjectionData(WAIT);
            await().atMost(WAIT).until(() -> delivered.size() == 12);

            assertThat(sequencesOf(delivered)).isSorted().doesNotHaveDuplicates();
            assertThat(delivered).allSatisfy(m -> assertThat(m.shard()).isEqualTo(SHARD));
            assertThat(delivered.stream().map(OutboxMessage::id).distinct()).hasSize(12);
            await().atMost(WAIT).until(() -> db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox")
                    + " WHERE delivered_at IS NULL") == 0);
            assertThat(outboxRows(db)).isEqualTo(12);
            assertThat(store.daemon().status().shard(SHARD).orElseThrow().outbox().undelivered()).isZero();
        }
    }

    @Test
    void aFailingPublisherIsRetriedWithTheSameIdWhileTheShardMovesOnAndShowsInStatusUntilItRecovers() {
        AtomicBoolean failing = new AtomicBoolean(true);
        List<OutboxMessage> attempts = Collections.synchronizedList(new ArrayList<>());
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxfail")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().stalledShardThreshold(Duration.ofMillis(300));
            options.projections().add(outboxed(false), Lifecycle.ASYNC).publishMessages(message -> {
                attempts.add(message);
                if (failing.get()) {
                    throw new IllegalStateException("broker down");
                }
                delivered.add(message);
            });
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "a", 10);
                // the projection is not held back by its failing side effects
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(store.querySession().load(Tally.class, "a").orElseThrow().count()).isEqualTo(10);

                await().atMost(WAIT).until(() -> attempts.size() >= 3);
                await().atMost(WAIT).untilAsserted(() -> {
                    OutboxStatus outbox = store.daemon().status().shard(SHARD).orElseThrow().outbox();
                    assertThat(outbox.undelivered()).isEqualTo(10);
                    assertThat(outbox.lastError()).contains("broker down");
                    assertThat(outbox.stuck()).isTrue();
                    assertThat(store.daemon().status().healthy()).isFalse();
                });
                assertThat(store.daemon().status().shard(SHARD).orElseThrow().state()).isEqualTo(ShardState.RUNNING);
                // the head of the shard's outbox is retried, always the same message, and nothing passes it
                assertThat(attempts.stream().map(OutboxMessage::id).distinct()).hasSize(1);
                assertThat(db.queryLong("SELECT MAX(attempts) FROM " + db.table("pc_outbox"))).isGreaterThan(1);

                failing.set(false);
                await().atMost(WAIT).until(() -> delivered.size() == 10);
                assertThat(sequencesOf(delivered)).isSorted().doesNotHaveDuplicates();
                assertThat(delivered.get(0).id()).isEqualTo(attempts.get(0).id());
                await().atMost(WAIT).untilAsserted(() -> {
                    OutboxStatus outbox = store.daemon().status().shard(SHARD).orElseThrow().outbox();
                    assertThat(outbox.undelivered()).isZero();
                    assertThat(outbox.lastError()).isNull();
                    assertThat(outbox.stuck()).isFalse();
                    assertThat(store.daemon().status().healthy()).isTrue();
                });
            }
        }
    }

    @Test
    void aPublisherThatHangsIsCutOffAtTheDeliveryTimeoutRetriedOnceItReturnsAndNeverHoldsThePageLoop()
            throws Exception {
        CountDownLatch hang = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxhang")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().outboxDeliveryTimeout(Duration.ofMillis(200)).stalledShardThreshold(Duration.ofMillis(300));
            options.projections().add(outboxed(false), Lifecycle.ASYNC).publishMessages(message -> {
                // the first call hangs, ignoring interrupts, until the test lets it go
                if (calls.incrementAndGet() == 1) {
                    while (true) {
                        try {
                            if (hang.await(60, TimeUnit.SECONDS)) {
                                break;
                            }
                        } catch (InterruptedException ignored) {
                            // a publisher that ignores the cut-off
                        }
                    }
                }
                delivered.add(message);
            });
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "a", 5);
                // one shard, so one page worker: the page loop goes on although the publisher hangs
                store.waitForNonStaleProjectionData(WAIT);
                appendTicks(store, "a", 5);
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(store.querySession().load(Tally.class, "a").orElseThrow().count()).isEqualTo(10);
                await().atMost(WAIT).untilAsserted(() -> {
                    OutboxStatus outbox = store.daemon().status().shard(SHARD).orElseThrow().outbox();
                    assertThat(outbox.lastError()).contains("delivery timeout");
                    assertThat(outbox.stuck()).isTrue();
                });
                // no second call while the first is still hung
                assertThat(calls.get()).isEqualTo(1);

                hang.countDown();
                await().atMost(WAIT).until(() -> delivered.stream().map(OutboxMessage::id).distinct().count() == 10);
                // the shard's order holds: the hung message first (perhaps twice: at least once), then the rest
                assertThat(sequencesOf(delivered).stream().distinct().toList()).hasSize(10).isSorted();
            }
        }
    }

    @Test
    void aStartingNodeDeliversWhatWasLeftAndReadsNoOutboxTheStartTimeReadFoundEmptyNeitherAtStartNorAtStop() {
        AtomicBoolean failing = new AtomicBoolean(true);
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxstart")) {
            StoreOptions options = fastDaemon(db);
            options.projections().add(outboxed(false), Lifecycle.ASYNC).publishMessages(message -> {
                if (failing.get()) {
                    throw new IllegalStateException("broker down");
                }
                delivered.add(message);
            });
            try (DocumentStore first = Ferret.createStore(options)) {
                appendTicks(first, "a", 5);
                first.waitForNonStaleProjectionData(WAIT);
            }
            assertThat(undeliveredRows(db)).as("left by the first node").isEqualTo(5);
            failing.set(false);

            AtomicInteger outboxReads = new AtomicInteger();
            FlakyDataSource counted = new FlakyDataSource(db.dataSource());
            counted.observeStatements(sql -> {
                if (sql.contains("delivered_at IS NULL ORDER BY id")) {
                    outboxReads.incrementAndGet();
                }
            });
            try (DocumentStore second = Ferret.createStore(options.dataSource(counted))) {
                await().atMost(WAIT).until(() -> delivered.size() == 5);
            }
            assertThat(undeliveredRows(db)).isZero();
            assertThat(outboxReads.get()).as("the shard with rows read them").isPositive();

            outboxReads.set(0);
            try (DocumentStore third = Ferret.createStore(options.dataSource(counted))) {
                third.waitForNonStaleProjectionData(WAIT);
                assertThat(third.daemon().status().shards()).hasSize(1);
            }
            assertThat(outboxReads.get()).as("outbox reads of shards known to have none, at start and stop").isZero();
        }
    }

    private static long undeliveredRows(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox") + " WHERE delivered_at IS NULL");
    }

    @Test
    void raisedEventsCommitWithTheirPageAndAPageThatRollsBackAppendsNone() {
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxraise");
             DocumentStore store = Ferret.createStore(node(db, outboxed(true), delivered))) {
            appendTicks(store, "a", 5);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(store.querySession().fetchStream("echo-a")).hasSize(5)
                    .allSatisfy(e -> assertThat(e.data()).isInstanceOf(Echo.class));

            // one page: the ticks raise events and publish, then the poison fails the page, which rolls back
            try (DocumentSession session = store.openSession()) {
                session.events().append("b", new Tick(1), new Tick(2), new Poison("late in the page"));
                session.saveChanges();
            }
            await().atMost(WAIT).until(() -> store.daemon().status().shard(SHARD).orElseThrow().state()
                    == ShardState.PAUSED);
            assertThat(store.querySession().fetchStream("echo-b")).isEmpty();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox"))).isEqualTo(5);
            assertThat(delivered).hasSize(5);
        }
    }

    @Test
    void aRebuildPublishesEveryEventThePreviousRunHadNotCommittedAndNothingItHad() {
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxrebuild");
             DocumentStore store = Ferret.createStore(node(db, outboxed(false), delivered))) {
            appendTicks(store, "a", 20);
            store.waitForNonStaleProjectionData(WAIT);
            await().atMost(WAIT).until(() -> delivered.size() == 20);

            // events in the log that the live run has not committed when the rebuild starts
            store.daemon().hold(SHARD);
            appendTicks(store, "a", 10);
            store.daemon().rebuild("Outboxed", WAIT);
            store.waitForNonStaleProjectionData(WAIT);

            await().atMost(WAIT).until(() -> delivered.size() >= 30);
            List<Long> sequences = sequencesOf(delivered);
            List<Long> firstRun = sequences.subList(0, 20);
            // the replay of what the previous run published stays silent; every later event publishes once
            assertThat(sequences).hasSize(30).doesNotHaveDuplicates();
            assertThat(sequences.subList(20, 30)).isSorted().allSatisfy(sequence ->
                    assertThat(sequence).isGreaterThan(firstRun.get(19)));
            assertThat(store.querySession().load(Tally.class, "a").orElseThrow().count()).isEqualTo(30);
        }
    }

    @Test
    void aRebuildAndAGatedWarmUpWriteNothingToTheOutbox() {
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxgate")) {
            try (DocumentStore blue = Ferret.createStore(node(db, outboxed(false), delivered))) {
                appendTicks(blue, "a", 6);
                blue.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> delivered.size() == 6);

                blue.daemon().rebuild("Outboxed", WAIT);
                blue.waitForNonStaleProjectionData(WAIT);
                assertThat(blue.querySession().load(Tally.class, "a").orElseThrow().count()).isEqualTo(6);
                assertThat(outboxRows(db)).isEqualTo(6);
            }
            Snapshot<Tally> green = outboxed(false).withVersion(2).gateSideEffectsBehindPriorVersion(true);
            try (DocumentStore store = Ferret.createStore(node(db, green, delivered))) {
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(outboxRows(db)).isEqualTo(6);

                appendTicks(store, "a", 2);
                store.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> delivered.size() == 8);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox")
                        + " WHERE shard = 'Outboxed:V2:All'")).isEqualTo(2);
            }
            assertThat(sequencesOf(delivered)).doesNotHaveDuplicates();
        }
    }

    @Test
    void deliveredRowsAreDeletedOnceTheirRetentionHasPassed() throws Exception {
        List<OutboxMessage> delivered = Collections.synchronizedList(new ArrayList<>());
        try (TestDatabase db = TestDatabase.create("outboxretain")) {
            StoreOptions options = node(db, outboxed(false), delivered);
            options.daemon().outboxRetention(Duration.ofMillis(200));
            // the retention passes on the clock (delivery stamps) and the time source (clean-up turns), not by sleeping
            MutableClock clock = new MutableClock(Instant.now());
            VirtualTime time = new VirtualTime();
            try (DocumentStore store = Ferret.createStore(options,
                    StoreSeams.defaults().withClock(clock).withTime(time))) {
                appendTicks(store, "a", 5);
                await().atMost(WAIT).until(() -> delivered.size() == 5);
                // more delivered rows than one clean-up statement deletes: the clean-up goes on batch after batch
                int many = ShardOutbox.DELETE_BATCH * 2 + 500;
                insertDelivered(db, "Old:All", many, OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC));
                clock.advance(Duration.ofMillis(400));
                time.advance(Duration.ofMillis(400));
                appendTicks(store, "a", 1);
                await().atMost(WAIT).until(() -> delivered.size() == 6);
                await().atMost(WAIT).until(() -> {
                    appendTicks(store, "b", 1);
                    clock.advance(Duration.ofMillis(50));
                    time.advance(Duration.ofMillis(50));
                    return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox") + " WHERE seq_id <= 5") == 0
                            && db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_outbox")
                            + " WHERE shard = 'Old:All'") == 0;
                });
            }
        }
    }

    /** {@code count} rows of {@code shard}, delivered at {@code at}, written the way the daemon writes them. */
    private static void insertDelivered(TestDatabase db, String shard, int count, OffsetDateTime at)
            throws SQLException {
        Dialect dialect = Dialects.of(db.engine());
        String insert = dialect.outboxSql(new TableNames(db.schema(), "pc_")).insert();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(insert)) {
            for (int i = 0; i < count; i++) {
                dialect.bindUuid(ps, 1, UUID.randomUUID());
                ps.setString(2, shard);
                ps.setLong(3, i + 1);
                ps.setString(4, StoreOptions.DEFAULT_TENANT);
                ps.setString(5, Effect.class.getName());
                ps.setString(6, "{\"sequence\":" + (i + 1) + "}");
                ps.setObject(7, at);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        db.execute("UPDATE " + db.table("pc_outbox") + " SET delivered_at = created WHERE shard = '" + shard + "'");
    }
}
