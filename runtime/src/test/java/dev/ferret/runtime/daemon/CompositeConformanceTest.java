package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.projections.SideEffects;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A composite projection runs its members as one shard: one page load for all of them, a second stage that reads
 * what the first wrote in the same page, one progression, and the shard's error policy, rebuild, tenants and
 * blue/green gate applying to the members together.
 */
@Tag("conformance")
class CompositeConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String PAGE_LOAD = "pc_events WHERE seq_id > ? AND seq_id <= ?";

    /** Stage 1: events per stream (Poison counts too, so a Poison taken back shows). */
    public record StreamCount(String id, long events) {
    }

    /** Stage 1: events of every stream. */
    public record Total(String id, long events) {
    }

    /** Stage 2: the stream's count as stage 1 left it when this event was applied. */
    public record Mirror(String id, long seen) {
    }

    /** A side effect: which composite version published it for which event. */
    public record Published(int version, long sequence) {
    }

    private final TestResources resources = new TestResources();
    private final Map<Integer, AtomicInteger> publishedByVersion = new ConcurrentHashMap<>();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    private static Snapshot<StreamCount> streamCounts(int version) {
        return Snapshot.of("StreamCounts", StreamCount.class)
                .create(Tick.class, (id, e) -> new StreamCount(id, 1))
                .apply(Tick.class, (doc, e) -> new StreamCount(doc.id(), doc.events() + 1))
                .apply(Poison.class, (doc, e) -> new StreamCount(doc.id(), doc.events() + 1))
                .withVersion(version);
    }

    private static MultiStreamProjection<Total> totals(int version) {
        return MultiStreamProjection.of("Totals", Total.class)
                .identity(Tick.class, e -> "all")
                .create(Tick.class, (id, e) -> new Total(id, 1))
                .apply(Tick.class, (doc, e) -> new Total(doc.id(), doc.events() + 1))
                .withVersion(version);
    }

    /** Stage 2: loads what stage 1 wrote for the event's stream, and throws on a Poison. */
    private final class Mirrors extends EventProjection {

        private final int version;

        Mirrors(int version) {
            super("Mirrors", Mirror.class);
            this.version = version;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            StreamCount count = operations.load(StreamCount.class, event.streamId()).orElseThrow(
                    () -> new IllegalStateException("stage 2 could not load stage 1's count of " + event.streamId()));
            if (event.data() instanceof Poison poison) {
                // after reading the page's pending count: the member itself must start the page over
                throw new IllegalStateException("stage 2 refuses " + poison.why());
            }
            operations.store(new Mirror(event.streamId(), count.events()));
        }

        @Override
        public void raiseSideEffects(EventEnvelope event, SideEffects effects) {
            effects.publish(new Published(version, event.sequence()));
        }
    }

    private CompositeProjection pipeline(int version) {
        return CompositeProjection.named("pipeline")
                .stage(streamCounts(version), totals(version))
                .stage(new Mirrors(version))
                .withVersion(version);
    }

    private StoreOptions options(TestDatabase db, FlakyDataSource dataSource) {
        StoreOptions options = fastDaemon(db);
        if (dataSource != null) {
            options.dataSource(dataSource);
        }
        options.daemon().batchSize(1_000);
        options.projections().publishPayloads(message -> publishedByVersion
                .computeIfAbsent(((Published) message).version(), v -> new AtomicInteger()).incrementAndGet());
        return options;
    }

    private static void appendWithDaemonOff(TestDatabase db, Map<String, List<Object>> streams) {
        StoreOptions options = fastDaemon(db);
        options.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore writer = Ferret.createStore(options); DocumentSession session = writer.openSession()) {
            streams.forEach((stream, events) -> session.events().append(stream, events.toArray()));
            session.saveChanges();
        }
    }

    private static Map<String, List<Object>> tenTicksIn(String... streams) {
        Map<String, List<Object>> events = new java.util.LinkedHashMap<>();
        for (String stream : streams) {
            events.put(stream, List.of(new Tick(1), new Tick(2), new Tick(3), new Tick(4), new Tick(5), new Tick(6),
                    new Tick(7), new Tick(8), new Tick(9), new Tick(10)));
        }
        return events;
    }

    private static <T> T load(DocumentStore store, Class<T> type, String id) {
        try (QuerySession session = store.querySession()) {
            return session.load(type, id).orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + id));
        }
    }

    @Test
    void theSecondStageLoadsWhatTheFirstWroteInTheSamePageAndTheShardIsOne() {
        TestDatabase db = resources.database("composite");
        appendWithDaemonOff(db, tenTicksIn("a", "b", "c"));
        StoreOptions options = options(db, null);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        store.waitForNonStaleProjectionData(WAIT);

        for (String stream : List.of("a", "b", "c")) {
            assertThat(load(store, StreamCount.class, stream).events()).isEqualTo(10);
            // the whole page was one page: stage 2 read stage 1's pending count, never a committed one
            assertThat(load(store, Mirror.class, stream).seen()).isEqualTo(10);
        }
        assertThat(load(store, Total.class, "all").events()).isEqualTo(30);
        assertThat(store.daemon().status().shards()).extracting(ShardStatus::name).containsExactly("pipeline:All");
        assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                + " WHERE name = 'pipeline:All'")).isEqualTo(30);
        await().atMost(WAIT).until(() -> published(1) == 30);
    }

    @Test
    void aPageIsLoadedOnceForAllMembersWhereSeparateProjectionsLoadItEach() {
        TestDatabase db = resources.database("compositeloads");
        appendWithDaemonOff(db, tenTicksIn("a", "b", "c"));

        AtomicInteger compositeLoads = new AtomicInteger();
        FlakyDataSource counted = new FlakyDataSource(db.dataSource());
        counted.observeStatements(sql -> {
            if (sql.contains(PAGE_LOAD)) {
                compositeLoads.incrementAndGet();
            }
        });
        StoreOptions options = options(db, counted);
        options.daemon().batchSize(10).maxBatchGrowth(1);
        options.projections().add(CompositeProjection.named("three")
                .stage(streamCounts(1), totals(1), Snapshot.of("Tallies", DaemonFixtures.Tally.class)
                        .create(Tick.class, (id, e) -> new DaemonFixtures.Tally(id, 1, e.n()))), Lifecycle.ASYNC);
        try (DocumentStore store = Ferret.createStore(options)) {
            store.waitForNonStaleProjectionData(WAIT);
        }

        TestDatabase separateDb = resources.database("separateloads");
        appendWithDaemonOff(separateDb, tenTicksIn("a", "b", "c"));
        AtomicInteger separateLoads = new AtomicInteger();
        FlakyDataSource separatelyCounted = new FlakyDataSource(separateDb.dataSource());
        separatelyCounted.observeStatements(sql -> {
            if (sql.contains(PAGE_LOAD)) {
                separateLoads.incrementAndGet();
            }
        });
        StoreOptions separate = options(separateDb, separatelyCounted);
        // separate projections share their loads too (SharedLoadsConformanceTest): off, to count each one's own
        separate.daemon().batchSize(10).maxBatchGrowth(1).sharedLoadMegabytes(0);
        separate.projections().add(streamCounts(1), Lifecycle.ASYNC).add(totals(1), Lifecycle.ASYNC)
                .add(Snapshot.of("Tallies", DaemonFixtures.Tally.class)
                        .create(Tick.class, (id, e) -> new DaemonFixtures.Tally(id, 1, e.n())), Lifecycle.ASYNC);
        try (DocumentStore store = Ferret.createStore(separate)) {
            store.waitForNonStaleProjectionData(WAIT);
        }

        // 30 events in pages of 10: three loads for the composite, three per projection for the others
        assertThat(compositeLoads).hasValue(3);
        assertThat(separateLoads).hasValue(9);
    }

    @Test
    void anEventAMemberCannotApplyIsDeadLetteredOnceAndTakenBackFromEveryMember() {
        TestDatabase db = resources.database("compositedl");
        appendWithDaemonOff(db, Map.of("a", List.of(new Tick(1), new Tick(2), new Poison("late member"), new Tick(3))));
        StoreOptions options = options(db, null);
        options.daemon().skipApplyErrors(true);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        store.waitForNonStaleProjectionData(WAIT);

        long poison = store.querySession().fetchStream("a").get(2).sequence();
        // stage 1 applied the Poison before stage 2 refused it: it is taken back there too
        assertThat(load(store, StreamCount.class, "a").events()).isEqualTo(3);
        assertThat(load(store, Mirror.class, "a").seen()).isEqualTo(3);
        assertThat(load(store, Total.class, "all").events()).isEqualTo(3);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters")
                + " WHERE projection = 'pipeline:All'")).isOne();
        assertThat(db.queryLong("SELECT seq_id FROM " + db.table("pc_dead_letters")
                + " WHERE projection = 'pipeline:All'")).isEqualTo(poison);
        await().atMost(WAIT).until(() -> published(1) == 3);
    }

    @Test
    void withoutSkippingAMembersApplyErrorPausesTheShardAndCommitsNoMembersWrites() {
        TestDatabase db = resources.database("compositepause");
        appendWithDaemonOff(db, Map.of("a", List.of(new Tick(1), new Poison("stop here"), new Tick(2))));
        StoreOptions options = options(db, null);
        options.daemon().skipApplyErrors(false);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));

        await().atMost(WAIT).until(() -> store.daemon().status().shard("pipeline:All")
                .map(s -> s.state() == ShardState.PAUSED).orElse(false));
        ShardStatus shard = store.daemon().status().shard("pipeline:All").orElseThrow();
        assertThat(shard.error()).isInstanceOf(ApplyFailedException.class).hasMessageContaining("pipeline:All");
        assertThat(shard.progression()).isZero();
        try (QuerySession session = store.querySession()) {
            assertThat(session.load(StreamCount.class, "a")).isEmpty();
            assertThat(session.load(Mirror.class, "a")).isEmpty();
        }
        assertThat(published(1)).isZero();
    }

    @Test
    void aRebuildReplaysEveryMembersDocuments() {
        TestDatabase db = resources.database("compositerebuild");
        appendWithDaemonOff(db, tenTicksIn("a", "b"));
        StoreOptions options = options(db, null);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        store.waitForNonStaleProjectionData(WAIT);

        // what a rebuild must tear down and write again, in every member's table
        db.execute("UPDATE " + db.table("pc_doc_mirror") + " SET data = '{\"id\":\"a\",\"seen\":-1}' WHERE id = 'a'");
        db.execute("DELETE FROM " + db.table("pc_doc_streamcount") + " WHERE id = 'b'");
        db.execute("DELETE FROM " + db.table("pc_doc_total"));
        store.daemon().rebuild("pipeline", WAIT);

        assertThat(load(store, Mirror.class, "a").seen()).isEqualTo(10);
        assertThat(load(store, StreamCount.class, "b").events()).isEqualTo(10);
        assertThat(load(store, Total.class, "all").events()).isEqualTo(20);
        // a rebuild publishes no side effects again
        assertThat(published(1)).isEqualTo(20);
    }

    @Test
    void eachTenantHasItsOwnCompositeShardAndOneTenantRebuildsAlone() {
        TestDatabase db = resources.database("compositetenants");
        StoreOptions options = options(db, null);
        options.events().partitionByTenant(true);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        for (String tenant : List.of("acme", "globex")) {
            try (DocumentSession session = store.openSession(tenant)) {
                session.events().append("s", new Tick(1), new Tick(2));
                session.saveChanges();
            }
        }
        store.waitForNonStaleProjectionData(WAIT);
        for (String tenant : List.of("acme", "globex")) {
            try (QuerySession session = store.querySession(tenant)) {
                assertThat(session.load(Mirror.class, "s")).hasValue(new Mirror("s", 2));
                assertThat(session.load(Total.class, "all")).hasValue(new Total("all", 2));
            }
        }
        assertThat(store.daemon().status().shards()).extracting(ShardStatus::name)
                .contains("pipeline:All@acme", "pipeline:All@globex");

        db.execute("DELETE FROM " + db.table("pc_doc_mirror"));
        store.daemon().rebuild("pipeline", "acme", WAIT, progress -> { });
        try (QuerySession session = store.querySession("acme")) {
            assertThat(session.load(Mirror.class, "s")).hasValue(new Mirror("s", 2));
        }
        try (QuerySession session = store.querySession("globex")) {
            assertThat(session.load(Mirror.class, "s")).as("the tenant not rebuilt").isEmpty();
        }
    }

    @Test
    void aGatedSecondVersionReplaysEveryMemberWithoutRepeatingSideEffects() {
        TestDatabase db = resources.database("compositeversions");
        appendWithDaemonOff(db, tenTicksIn("a"));
        StoreOptions blue = options(db, null);
        blue.projections().add(pipeline(1), Lifecycle.ASYNC);
        try (DocumentStore store = Ferret.createStore(blue)) {
            store.waitForNonStaleProjectionData(WAIT);
            await().atMost(WAIT).until(() -> published(1) == 10);
        }

        StoreOptions green = options(db, null);
        green.projections().add(pipeline(2).gateSideEffectsBehindPriorVersion(true), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(green));
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(store.daemon().status().shards()).extracting(ShardStatus::name)
                .containsExactly("pipeline:V2:All");
        assertThat(load(store, Mirror.class, "a").seen()).isEqualTo(10);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_streamcount_v2"))).isOne();
        assertThat(published(2)).as("side effects of the replay, held back by the gate").isZero();

        try (DocumentSession session = store.openSession()) {
            session.events().append("a", new Tick(11));
            session.saveChanges();
        }
        store.waitForNonStaleProjectionData(WAIT);
        await().atMost(WAIT).until(() -> published(2) == 1);
        assertThat(load(store, StreamCount.class, "a").events()).isEqualTo(11);
    }

    @Test
    void aSnapshotMemberAggregatesStreamsLive() {
        TestDatabase db = resources.database("compositelive");
        appendWithDaemonOff(db, tenTicksIn("a"));
        StoreOptions options = options(db, null);
        options.daemon().mode(DaemonMode.DISABLED);
        options.projections().add(pipeline(1), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        try (QuerySession session = store.querySession()) {
            assertThat(session.aggregateStream(StreamCount.class, "a")).hasValue(new StreamCount("a", 10));
        }
    }

    @Test
    void aCompositeIsAsyncOnlyHasStagesAndNamesItsMembersOnce() {
        ProjectionOptions projections = new ProjectionOptions();
        assertThatThrownBy(() -> projections.add(pipeline(1), Lifecycle.INLINE))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'pipeline'")
                .hasMessageContaining("INLINE");
        assertThatThrownBy(() -> projections.add(CompositeProjection.named("empty"), Lifecycle.ASYNC))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'empty' has no stages");
        assertThatThrownBy(() -> CompositeProjection.named("outer").stage(pipeline(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'outer'")
                .hasMessageContaining("pipeline");
        assertThatThrownBy(() -> CompositeProjection.named("twice").stage(streamCounts(1)).stage(streamCounts(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two members named 'StreamCounts'");
        assertThatThrownBy(() -> CompositeProjection.named("none").stage())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no members");
    }

    private int published(int version) {
        return publishedByVersion.getOrDefault(version, new AtomicInteger()).get();
    }
}
