package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.metrics.OpenTelemetryMetrics;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.QueryPlans;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What an operator does to a running daemon (hold and restart a shard; list, discard and replay its dead letters),
 * and the metrics it reports, through an OpenTelemetry SDK read in memory.
 */
@Tag("conformance")
class OperatorActionsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SHARD = "Ledger:All";
    private static final AttributeKey<String> SHARD_KEY = AttributeKey.stringKey(OpenTelemetryMetrics.SHARD_ATTRIBUTE);
    private static final AttributeKey<String> PROJECTION_KEY =
            AttributeKey.stringKey(OpenTelemetryMetrics.PROJECTION_ATTRIBUTE);
    private static final AttributeKey<String> DATABASE_KEY =
            AttributeKey.stringKey(OpenTelemetryMetrics.DATABASE_ATTRIBUTE);
    /** The attributes, all of them, of the metrics test's data points. */
    private Attributes ours = Attributes.empty();

    private final TestResources resources = new TestResources();
    /** Poison events throw while this is set; per test, so no other test class sees it. */
    private final AtomicBoolean refusing = new AtomicBoolean(true);
    private final List<Object> published = new CopyOnWriteArrayList<>();
    /** While set, the ledger's ticks wait for it (at most a minute): a rebuild that cannot finish yet. */
    private volatile CountDownLatch gate;

    @AfterEach
    void closeAll() throws Exception {
        resources.close();
    }

    public record Accepted(String stream, String why) {
    }

    private Snapshot<Tally> ledger() {
        return Snapshot.of("Ledger", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> {
                    passGate();
                    return new Tally(doc.id(), doc.count() + 1, e.n());
                })
                .apply(Poison.class, (doc, e) -> {
                    if (refusing.get()) {
                        throw new IllegalStateException("refused: " + e.why());
                    }
                    return new Tally(doc.id(), doc.count() + 100, doc.lastTick());
                })
                .raiseSideEffects((doc, event, effects) -> {
                    if (event.data() instanceof Poison poison) {
                        effects.publish(new Accepted(doc.id(), poison.why()));
                    } else if (event.data() instanceof Tick tick && tick.n() >= 1000) {
                        effects.publish(new Accepted(doc.id(), "tick " + tick.n()));
                    }
                });
    }

    private void passGate() {
        CountDownLatch waitFor = gate;
        try {
            if (waitFor != null && !waitFor.await(1, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the gate", e);
        }
    }

    private StoreOptions options(TestDatabase db) {
        StoreOptions options = fastDaemon(db);
        options.daemon().skipApplyErrors(true);
        options.projections().add(ledger(), Lifecycle.ASYNC).publishPayloads(published::add);
        return options;
    }

    private static void append(DocumentStore store, String stream, Object... events) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, events);
            session.saveChanges();
        }
    }

    private static long count(DocumentStore store, String id) {
        return store.querySession().load(Tally.class, id).map(Tally::count).orElse(0L);
    }

    private static ShardStatus shard(DocumentStore store) {
        return store.daemon().status().shard(SHARD).orElseThrow();
    }

    @Test
    void aHeldShardAppliesNothingStaysHealthyAndResumesWhereItStoppedOnRestart() {
        TestDatabase db = resources.database("opshold");
        DocumentStore store = resources.add(Ferret.createStore(options(db)));
        append(store, "a", new Tick(1));
        store.waitForNonStaleProjectionData(WAIT);

        store.daemon().hold(SHARD);
        append(store, "a", new Tick(2), new Tick(3));
        long progression = shard(store).progression();

        assertThat(shard(store).state()).isEqualTo(ShardState.HELD);
        assertThat(shard(store).error()).isNull();
        assertThat(store.daemon().status().healthy()).isTrue();
        assertThat(store.daemon().status().live()).isTrue();
        // the detector moves on while the shard does not: the lag shows the held events
        await().atMost(WAIT).until(() -> shard(store).lag() == 2);
        assertThat(shard(store).progression()).isEqualTo(progression);
        assertThat(count(store, "a")).isEqualTo(1);

        store.daemon().restart(SHARD);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(count(store, "a")).isEqualTo(3);
        assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);
        assertThatThrownBy(() -> store.daemon().hold("Nothing:All"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Nothing:All");
    }

    @Test
    void deadLettersAreListedInPagesWithTheirEventCountedAndDiscardedOnce() {
        TestDatabase db = resources.database("opslist");
        DocumentStore store = resources.add(Ferret.createStore(options(db)));
        append(store, "a", new Tick(1), new Poison("first"), new Tick(2));
        append(store, "b", new Tick(1), new Poison("second"), new Poison("third"));
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(store.daemon().deadLetterCounts()).isEqualTo(Map.of(SHARD, 3L));
        List<DeadLetterEvent> first = store.daemon().deadLetters(SHARD, 0, 2);
        assertThat(first).hasSize(2);
        List<DeadLetterEvent> rest = store.daemon().deadLetters(SHARD, first.get(1).id(), 2);
        assertThat(rest).hasSize(1);
        DeadLetterEvent dead = first.get(0);
        assertThat(dead.shardName()).isEqualTo(SHARD);
        assertThat(dead.streamId()).isEqualTo("a");
        assertThat(dead.sequence()).isEqualTo(store.querySession().fetchStream("a").get(1).sequence());
        assertThat(dead.errorType()).isEqualTo(IllegalStateException.class.getName());
        assertThat(dead.message()).isEqualTo("refused: first");
        assertThat(dead.eventJson()).contains("\"why\"").contains("first");
        assertThat(dead.failedAt()).isNotNull();
        assertThat(rest.get(0).message()).isEqualTo("refused: third");

        assertThat(store.daemon().discardDeadLetter(SHARD, dead.id())).isTrue();
        assertThat(store.daemon().discardDeadLetter(SHARD, dead.id())).isFalse();
        assertThat(store.daemon().deadLetterCounts()).isEqualTo(Map.of(SHARD, 2L));
        // a discarded event stays in the log and is never applied
        assertThat(count(store, "a")).isEqualTo(2);
        assertThatThrownBy(() -> store.daemon().deadLetters(SHARD, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit was 0");
    }

    @Test
    void aReplayThatFailsKeepsTheDeadLetterAndOneThatSucceedsAppliesTheEventOnceWithItsSideEffects() {
        TestDatabase db = resources.database("opsreplay");
        DocumentStore store = resources.add(Ferret.createStore(options(db)));
        append(store, "a", new Tick(1), new Poison("late"), new Tick(2));
        store.waitForNonStaleProjectionData(WAIT);
        DeadLetterEvent dead = store.daemon().deadLetters(SHARD, 0, 10).get(0);
        long progression = shard(store).progression();

        assertThatThrownBy(() -> store.daemon().replayDeadLetter(SHARD, dead.id()))
                .isInstanceOf(ApplyFailedException.class).hasMessageContaining("refused: late");
        assertThat(store.daemon().deadLetters(SHARD, 0, 10)).extracting(DeadLetterEvent::id).containsExactly(dead.id());
        assertThat(count(store, "a")).isEqualTo(2);
        assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);

        refusing.set(false);
        store.daemon().replayDeadLetter(SHARD, dead.id());

        assertThat(count(store, "a")).isEqualTo(102);
        assertThat(store.daemon().deadLetterCounts()).isEmpty();
        // the loop starts again from the persisted progression, which the replay left where it was
        await().atMost(WAIT).until(() -> shard(store).progression() == progression);
        await().atMost(WAIT).untilAsserted(() -> assertThat(published).containsExactly(new Accepted("a", "late")));
        assertThatThrownBy(() -> store.daemon().replayDeadLetter(SHARD, dead.id()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no dead letter " + dead.id());

        // the shard runs on after the replay, from where it was
        append(store, "a", new Tick(3));
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(count(store, "a")).isEqualTo(103);
        assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);
    }

    @Test
    void aReplayWhoseCommitReplyIsLostAppliedOnceAndCannotBeRepeated() {
        TestDatabase db = resources.database("opsreplaylost");
        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        DocumentStore store = resources.add(Ferret.createStore(options(db).dataSource(flaky)));
        append(store, "a", new Tick(1), new Poison("late"));
        store.waitForNonStaleProjectionData(WAIT);
        long id = store.daemon().deadLetters(SHARD, 0, 1).get(0).id();
        refusing.set(false);
        Thread caller = Thread.currentThread();
        // the replay's transaction commits on the server; its caller is told it failed
        flaky.loseCommitReplies(t -> t == caller, 1);

        assertThatThrownBy(() -> store.daemon().replayDeadLetter(SHARD, id)).isInstanceOf(RuntimeException.class);
        assertThat(flaky.lostReplies()).isEqualTo(1);

        // the dead letter went with the commit: asking again applies nothing twice
        assertThat(count(store, "a")).isEqualTo(101);
        assertThatThrownBy(() -> store.daemon().replayDeadLetter(SHARD, id))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no dead letter " + id);
        assertThat(count(store, "a")).isEqualTo(101);
        assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);
        append(store, "a", new Tick(2));
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(count(store, "a")).isEqualTo(102);
    }

    @Test
    void aHeldShardStaysHeldAfterAReplay() {
        TestDatabase db = resources.database("opsheldreplay");
        DocumentStore store = resources.add(Ferret.createStore(options(db)));
        append(store, "a", new Tick(1), new Poison("x"));
        store.waitForNonStaleProjectionData(WAIT);
        store.daemon().hold(SHARD);
        refusing.set(false);

        store.daemon().replayDeadLetter(SHARD, store.daemon().deadLetters(SHARD, 0, 1).get(0).id());

        assertThat(count(store, "a")).isEqualTo(101);
        assertThat(shard(store).state()).isEqualTo(ShardState.HELD);
    }

    @ParameterizedTest(name = "metrics per shard: {0}")
    @ValueSource(booleans = {false, true})
    void theDaemonReportsItsPagesRetriesDeadLettersLatencyAndGaugesThroughOpenTelemetry(boolean perShard) {
        TestDatabase db = resources.database("opsmetrics");
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        OpenTelemetrySdk sdk = resources.add(OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build());
        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        StoreOptions options = options(db).dataSource(flaky);
        options.daemon().metricsPerShard(perShard);
        // per shard: the shard's name with its projection and database; else the projection's and database's only
        ours = perShard ? Attributes.of(SHARD_KEY, SHARD, PROJECTION_KEY, "Ledger", DATABASE_KEY, "default")
                : Attributes.of(PROJECTION_KEY, "Ledger", DATABASE_KEY, "default");
        Collection<MetricData> metrics;
        long last;
        try (DocumentStore store = Ferret.createStore(options,
                StoreSeams.defaults().withMetrics(new OpenTelemetryMetrics(sdk)))) {
            append(store, "a", new Tick(1), new Poison("p"), new Tick(2));
            store.waitForNonStaleProjectionData(WAIT);
            // one outage of the page workers: the shard backs off at least once, then heals
            flaky.refuseTo(FlakyDataSource.shardWorkers());
            append(store, "a", new Tick(3));
            await().atMost(WAIT).until(() -> shard(store).state() == ShardState.RETRYING);
            flaky.refuseTo(t -> false);
            store.waitForNonStaleProjectionData(WAIT);
            last = store.querySession().fetchStream("a").get(3).sequence();
            // the non-stale wait may return before the retry's success is recorded in the shard's state
            await().atMost(WAIT).until(() -> shard(store).state() == ShardState.RUNNING);
            metrics = reader.collectAllMetrics();
        }

        assertThat(sum(metrics, "ferret.shard.events_applied")).isEqualTo(4);
        assertThat(sum(metrics, "ferret.shard.pages_committed")).isGreaterThanOrEqualTo(2);
        assertThat(sum(metrics, "ferret.shard.dead_letters")).isEqualTo(1);
        assertThat(sum(metrics, "ferret.shard.retries")).isGreaterThanOrEqualTo(1);
        assertThat(histogramCount(metrics, "ferret.shard.append_to_visible")).isEqualTo(4);
        assertThat(histogramCount(metrics, "ferret.shard.page.duration"))
                .isEqualTo(sum(metrics, "ferret.shard.pages_committed"));
        assertThat(gauge(metrics, "ferret.shard.progression")).isEqualTo(last);
        assertThat(gauge(metrics, "ferret.shard.lag")).isZero();
        assertThat(metric(metrics, "ferret.high_water_mark").orElseThrow().getLongGaugeData().getPoints())
                .singleElement().satisfies(p -> assertThat(p.getValue()).isEqualTo(last));
        assertThat(metric(metrics, "ferret.high_water_mark.skipped_sequences")).isPresent();
        assertThat(metric(metrics, "ferret.shards").orElseThrow().getLongGaugeData().getPoints())
                .singleElement().satisfies(p -> {
                    assertThat(p.getValue()).isEqualTo(1);
                    assertThat(p.getAttributes().get(AttributeKey.stringKey(OpenTelemetryMetrics.STATE_ATTRIBUTE)))
                            .isEqualTo("RUNNING");
                    assertThat(p.getAttributes().get(SHARD_KEY)).as("the count is per projection").isNull();
                });
        // closed, the store's daemon no longer reports its gauges
        assertThat(metric(reader.collectAllMetrics(), "ferret.shard.lag")).isEmpty();
    }

    @Test
    void aRebuildWhoseCallerStoppedWaitingEndsByItselfAndTheShardGoesLive() {
        TestDatabase db = resources.database("opsrebuild");
        DocumentStore store = resources.add(Ferret.createStore(options(db)));
        append(store, "a", new Tick(1), new Tick(2), new Tick(1000));
        store.waitForNonStaleProjectionData(WAIT);
        await().atMost(WAIT).until(() -> published.size() == 1);

        gate = new CountDownLatch(1);
        assertThatThrownBy(() -> store.daemon().rebuild("Ledger", Duration.ofMillis(300)))
                .isInstanceOf(NonStaleTimeoutException.class).hasMessageContaining("goes on in the background");
        assertThat(shard(store).state()).isEqualTo(ShardState.REBUILDING);
        gate.countDown();
        gate = null;

        await().atMost(WAIT).until(() -> shard(store).state() == ShardState.RUNNING);
        assertThat(count(store, "a")).isEqualTo(3);
        // the replay published nothing; the event after it is live and does
        append(store, "a", new Tick(1001));
        store.waitForNonStaleProjectionData(WAIT);
        await().atMost(WAIT).untilAsserted(() -> assertThat(published)
                .containsExactly(new Accepted("a", "tick 1000"), new Accepted("a", "tick 1001")));
    }

    @Test
    void underHotColdEachNodeIsListedWithItsHeartbeatAge() {
        TestDatabase db = resources.database("opsnodes");
        StoreOptions options = options(db);
        options.daemon().mode(DaemonMode.HOT_COLD);
        DocumentStore first = resources.add(Ferret.createStore(options, StoreSeams.defaults()));
        StoreOptions secondOptions = options(db);
        secondOptions.daemon().mode(DaemonMode.HOT_COLD);
        DocumentStore second = resources.add(Ferret.createStore(secondOptions, StoreSeams.defaults()));
        AsyncDaemon daemon = (AsyncDaemon) first.daemon();
        String other = ((AsyncDaemon) second.daemon()).nodeName();

        assertThat(daemon.nodeName()).startsWith(DaemonSql.HEARTBEAT_ROW_PREFIX).isNotEqualTo(other);
        await().atMost(WAIT).untilAsserted(() -> assertThat(daemon.nodes()).containsKeys(daemon.nodeName(), other));
        assertThat(daemon.nodes().values()).allSatisfy(age -> assertThat(age).isLessThan(WAIT));
        assertThat(((AsyncDaemon) resources.add(Ferret.createStore(options(resources.database("opssolo")),
                StoreSeams.defaults())).daemon()).nodes()).isEmpty();
    }

    @Test
    void aShardPausedOnAPoisonEventSkipsItToTheDeadLettersAndRunsOn() {
        TestDatabase db = resources.database("opsskip");
        StoreOptions options = options(db);
        options.daemon().skipApplyErrors(false);
        DocumentStore store = resources.add(Ferret.createStore(options));
        append(store, "a", new Tick(1), new Poison("stuck"), new Tick(2));
        await().atMost(WAIT).until(() -> shard(store).state() == ShardState.PAUSED);
        assertThat(shard(store).error()).isInstanceOf(ApplyFailedException.class).hasMessageContaining("stuck");
        assertThatThrownBy(() -> store.daemon().skipFailedEvent("Nothing:All"))
                .isInstanceOf(IllegalArgumentException.class);
        long poison = store.querySession().fetchStream("a").get(1).sequence();

        assertThat(store.daemon().skipFailedEvent(SHARD)).isEqualTo(poison);
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);
        assertThat(count(store, "a")).isEqualTo(2);
        List<DeadLetterEvent> dead = store.daemon().deadLetters(SHARD, 0, 10);
        assertThat(dead).singleElement().satisfies(d -> assertThat(d.sequence()).isEqualTo(poison));
        assertThatThrownBy(() -> store.daemon().skipFailedEvent(SHARD)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RUNNING");
        // the policy is back: the next poison pauses the shard again
        append(store, "a", new Poison("again"));
        await().atMost(WAIT).until(() -> shard(store).state() == ShardState.PAUSED);
        assertThat(store.daemon().discardDeadLetter(SHARD, dead.get(0).id())).isTrue();
    }

    @Test
    void aTenantsShardSkipsItsRefusedEventByTheStoreWideSequenceAndPausesOnTheNextOne() {
        TestDatabase db = resources.database("opsskiptenant");
        StoreOptions options = options(db);
        options.daemon().skipApplyErrors(false);
        options.events().partitionByTenant(true);
        DocumentStore store = resources.add(Ferret.createStore(options));
        // the other tenant's events push the store-wide sequence past t2's own numbers
        for (int i = 0; i < 5; i++) {
            appendFor(store, "t1", "x", new Tick(i));
        }
        appendFor(store, "t2", "b", new Tick(1), new Poison("first"), new Tick(2));
        String shard = "Ledger:All@t2";
        await().atMost(WAIT).until(() -> store.daemon().status().shard(shard).orElseThrow().state()
                == ShardState.PAUSED);

        long skipped = store.daemon().skipFailedEvent(shard);
        await().atMost(WAIT).until(() -> store.daemon().deadLetterCounts().getOrDefault(shard, 0L) == 1);
        assertThat(store.daemon().deadLetters(shard, 0, 5)).singleElement()
                .satisfies(d -> assertThat(d.sequence()).isEqualTo(skipped));
        appendFor(store, "t2", "b", new Poison("second"));
        await().atMost(WAIT).until(() -> store.daemon().status().shard(shard).orElseThrow().state()
                == ShardState.PAUSED);
        assertThat(store.daemon().deadLetterCounts()).containsEntry(shard, 1L);
    }

    private static void appendFor(DocumentStore store, String tenant, String stream, Object... events) {
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(stream, events);
            session.saveChanges();
        }
    }

    @Test
    void aPageOfOneShardsDeadLettersReadsTheShardIndexWhateverTheTableHolds() throws SQLException {
        TestDatabase db = resources.database("opsplan");
        resources.add(Ferret.createStore(options(db)));
        int shards = 40;
        int perShard = 500;
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + db.table("pc_dead_letters")
                     + " (projection, seq_id, type, tenant_id, exception_type, message, timestamp)"
                     + " VALUES (?, ?, 'poison', '*DEFAULT*', 'x', 'm', ?)")) {
            OffsetDateTime now = OffsetDateTime.now();
            for (int i = 0; i < shards * perShard; i++) {
                ps.setString(1, "Shard" + i % shards + ":All");
                ps.setLong(2, i + 1);
                ps.setObject(3, now);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        String list = Dialects.of(db.engine()).deadLetterSql(new TableNames(db.schema(), "pc_")).list();
        String plan = QueryPlans.of(db, list, (c, ps) -> {
            ps.setString(1, "Shard7:All");
            ps.setLong(2, 0);
            ps.setInt(3, 50);
        });
        if (db.engine() == DatabaseEngine.POSTGRESQL) {
            // the join reads pc_events by its primary key; empty here, the planner may scan it instead
            assertThat(plan).as(plan).contains("ix_pc_dead_letters_shard")
                    .doesNotContain("Seq Scan on pc_dead_letters");
        } else if (db.engine() == DatabaseEngine.H2) {
            assertThat(plan.toUpperCase()).as(plan).contains("IX_PC_DEAD_LETTERS_SHARD");
            assertThat(QueryPlans.h2RowsVisited(plan)).as("rows H2 visited, in %s", plan).isLessThan(perShard);
        } else {
            assertThat(plan).as(plan).contains("Index=\"[ix_pc_dead_letters_shard]\"")
                    .contains("PhysicalOp=\"Index Seek\"");
        }
        assertThat(resources.add(Ferret.createStore(options(db))).daemon().deadLetterCounts()).hasSize(shards)
                .containsEntry("Shard7:All", (long) perShard);
    }

    private static Optional<MetricData> metric(Collection<MetricData> metrics, String name) {
        return metrics.stream().filter(m -> m.getName().equals(name)).findFirst();
    }

    private long sum(Collection<MetricData> metrics, String name) {
        return metric(metrics, name).orElseThrow(() -> new AssertionError("no metric " + name)).getLongSumData()
                .getPoints().stream().filter(this::ours).mapToLong(p -> p.getValue()).sum();
    }

    private long histogramCount(Collection<MetricData> metrics, String name) {
        return metric(metrics, name).orElseThrow(() -> new AssertionError("no metric " + name)).getHistogramData()
                .getPoints().stream().filter(this::ours).mapToLong(p -> p.getCount()).sum();
    }

    private long gauge(Collection<MetricData> metrics, String name) {
        return metric(metrics, name).orElseThrow(() -> new AssertionError("no metric " + name)).getLongGaugeData()
                .getPoints().stream().filter(this::ours).findFirst().orElseThrow().getValue();
    }

    private boolean ours(PointData point) {
        return point.getAttributes().equals(ours);
    }
}
