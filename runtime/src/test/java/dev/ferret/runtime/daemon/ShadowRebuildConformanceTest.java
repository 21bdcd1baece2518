package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.ShadowTable;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.ApplyGate;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.MonotonicReader;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rebuild of a live projection replays into shadow tables while queries keep reading the live ones, and swaps the
 * result in under the shard, in one transaction: a reader querying in a loop never sees fewer documents, or an older
 * state, than it saw before the rebuild started; a non-stale wait is released by the swap, not by the replay's
 * progress; and a rebuild whose node stopped mid-replay resumes from the replay's own row at the next start.
 */
@Tag("conformance")
class ShadowRebuildConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<String> STREAMS = List.of("a", "b", "c");
    private static final String TENANT = "acme";

    public record Count(String id, long value) {
    }

    /** What each tick adds: the rebuild's code counts differently from the first run's, so its result shows. */
    private static volatile long step = 1;
    /** While closed, every apply waits here: holds the replay on its first event. */
    private static final ApplyGate GATE = new ApplyGate();
    /** The tick number whose apply throws (0: none): a replay that stops part-way. */
    private static volatile int failAtTick;
    private static final AtomicInteger APPLIED = new AtomicInteger();

    @AfterEach
    void reset() {
        step = 1;
        GATE.reset();
        failAtTick = 0;
    }

    private static Snapshot<Count> counting() {
        return Snapshot.of("Count", Count.class)
                .create(Tick.class, (id, e) -> new Count(id, applied(e)))
                .apply(Tick.class, (doc, e) -> new Count(doc.id(), doc.value() + applied(e)));
    }

    private static long applied(Tick tick) {
        GATE.pass();
        if (tick.n() == failAtTick) {
            throw new IllegalStateException("tick " + tick.n() + " fails on purpose");
        }
        APPLIED.incrementAndGet();
        return step;
    }

    private static StoreOptions options(TestDatabase db, boolean partitioned) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().partitionByTenant(partitioned);
        options.daemon().batchSize(2).maxBatchGrowth(1).rebuildBatchGrowth(1);
        options.projections().add(counting(), Lifecycle.ASYNC);
        return options;
    }

    private static DocumentSession session(DocumentStore store, boolean partitioned) {
        return partitioned ? store.openSession(TENANT) : store.openSession();
    }

    private static void append(DocumentStore store, boolean partitioned, List<String> streams, int ticks) {
        try (DocumentSession session = session(store, partitioned)) {
            for (String stream : streams) {
                for (int i = 1; i <= ticks; i++) {
                    session.events().append(stream, new Tick(i));
                }
            }
            session.saveChanges();
        }
    }

    private static Map<String, Long> read(DocumentStore store, boolean partitioned) {
        Map<String, Long> values = new HashMap<>();
        try (QuerySession query = partitioned ? store.querySession(TENANT) : store.querySession()) {
            query.query(Count.class).toList().forEach(count -> values.put(count.id(), count.value()));
        }
        return values;
    }

    private static String shard(boolean partitioned) {
        return partitioned ? "Count:All@" + TENANT : "Count:All";
    }

    private static long progression(TestDatabase db, String row) {
        return db.queryLong("SELECT COALESCE(MAX(last_seq_id), -1) FROM " + db.table("pc_event_progression")
                + " WHERE name = '" + row + "'");
    }

    private static long shadowRows(TestDatabase db) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_count_rebuild"));
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aReaderNeverSeesAnEmptyOrOlderReadModelWhileARebuildReplaysAndTheSwapReleasesWaits(boolean partitioned)
            throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowrebuild" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            append(store, partitioned, STREAMS, 5);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(read(store, partitioned)).containsOnlyKeys(STREAMS).containsValues(5L);

            MonotonicReader reader = new MonotonicReader("rebuild-reader", () -> read(store, partitioned));
            try {
                await().atMost(WAIT).until(() -> reader.reads() >= 3);
                step = 100;
                GATE.close();
                CompletableFuture<Void> rebuild = CompletableFuture.runAsync(
                        () -> store.daemon().rebuild("Count", WAIT));
                await().atMost(WAIT).until(() -> store.daemon().status().shards().stream()
                        .anyMatch(s -> s.state() == ShardState.REBUILDING));
                await().atMost(WAIT).until(() -> reader.reads() >= 10);
                assertThat(read(store, partitioned)).as("the live documents, as the rebuild found them")
                        .containsOnlyKeys(STREAMS).containsValues(5L);
                assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX))
                        .as("the replay's own row, from zero").isZero();

                // an event appended during the replay: a wait for it is released by the swap, not before
                append(store, partitioned, List.of("d"), 1);
                assertThatThrownBy(() -> store.waitForNonStaleProjectionData(Duration.ofMillis(500)))
                        .isInstanceOf(NonStaleTimeoutException.class);
                assertThat(read(store, partitioned)).doesNotContainKey("d");

                GATE.open();
                rebuild.get(60, TimeUnit.SECONDS);
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(read(store, partitioned)).containsOnlyKeys("a", "b", "c", "d")
                        .containsEntry("a", 500L).containsEntry("d", 100L);
                await().atMost(WAIT).until(() -> reader.lastSeen().getOrDefault("a", 0L) == 500L);
            } finally {
                GATE.open();
                reader.close();
            }
            assertThat(reader.violation()).as("what the reader saw").isNull();
            assertThat(reader.seen()).as("the reader read the live model before the swap and the rebuilt one after")
                    .anySatisfy(values -> assertThat(values).containsEntry("a", 5L))
                    .anySatisfy(values -> assertThat(values).containsEntry("a", 500L));
            await().atMost(WAIT).until(() -> shadowRows(db) == 0);
            assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX)).as("the replay's row is gone")
                    .isEqualTo(-1);
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aReplayThatStoppedPartWayResumesFromItsOwnRowAtTheNextStartAndSwaps(boolean partitioned) throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowresume" + partitioned)) {
            try (DocumentStore first = Ferret.createStore(options(db, partitioned))) {
                append(first, partitioned, STREAMS, 5);
                first.waitForNonStaleProjectionData(WAIT);
                long live = progression(db, shard(partitioned));

                // the replay stops at the first stream's fourth tick, its earlier pages committed to the shadow
                step = 100;
                failAtTick = 4;
                assertThatThrownBy(() -> first.daemon().rebuild("Count", WAIT))
                        .isInstanceOf(FerretException.class).hasMessageContaining("paused");
                assertThat(read(first, partitioned)).as("the live documents are untouched")
                        .containsOnlyKeys(STREAMS).containsValues(5L);
                assertThat(progression(db, shard(partitioned))).as("the live row is untouched").isEqualTo(live);
                assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX))
                        .as("the replay committed pages before it stopped").isPositive();
                assertThat(shadowRows(db)).isPositive();
            }

            long resumedFrom = progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX);
            failAtTick = 0;
            APPLIED.set(0);
            try (DocumentStore second = Ferret.createStore(options(db, partitioned))) {
                second.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> second.daemon().status().shards().stream()
                        .noneMatch(s -> s.state() == ShardState.REBUILDING));
                assertThat(read(second, partitioned)).containsOnlyKeys(STREAMS).containsValues(500L);
                // a page retried after a transient failure applies its events again, so at least the rest
                assertThat(APPLIED.get()).as("the restart resumed from the replay's row %d, not from zero", resumedFrom)
                        .isLessThan(15).isGreaterThanOrEqualTo(15 - (int) resumedFrom);
                // emptied after the swap committed, by the shard's loop
                await().atMost(WAIT).until(() -> shadowRows(db) == 0);
            }
            assertThat(shadowRows(db)).isZero();
            assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX)).isEqualTo(-1);
            assertThat(progression(db, shard(partitioned))).isEqualTo(15);
        }
    }

    /** A statement that writes or reads the shadow table, by its kind; null for any other. */
    private static String shadowStatementKind(String sql) {
        String shadow = "pc_doc_count_rebuild";
        if (!sql.contains(shadow) || isSwapCopy(sql) || sql.startsWith("DELETE")) {
            return null;
        }
        if (sql.contains("ON CONFLICT") || sql.startsWith("MERGE")) {
            return "upsert";
        }
        return sql.startsWith("INSERT INTO") || sql.startsWith("COPY") ? "insert"
                : sql.startsWith("SELECT") ? "read" : sql;
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void theReplaysFirstPageInsertsIntoTheEmptiedShadowWithoutReadingItAndLaterPagesReadThenInsertWhatIsMissing(
            boolean partitioned)
            throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowinsert" + partitioned)) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> kinds = new CopyOnWriteArrayList<>();
            observed.observeStatements(sql -> {
                String kind = shadowStatementKind(sql);
                if (kind != null) {
                    kinds.add(kind);
                }
            });
            try (DocumentStore store = Ferret.createStore(options(db, partitioned).dataSource(observed))) {
                append(store, partitioned, STREAMS, 3);
                store.waitForNonStaleProjectionData(WAIT);
                kinds.clear();

                step = 100;
                store.daemon().rebuild("Count", WAIT);

                assertThat(read(store, partitioned)).containsOnlyKeys(STREAMS).containsValues(300L);
                // pages of two events: a1 a2 | a3 b1 | b2 b3 | c1 c2 | c3; the first writes "a" into the empty shadow
                // unread, later pages read what the shadow holds and insert what they found missing ("b" in the
                // second, "c" in the fourth) and upsert the rest
                assertThat(kinds).as("statements on the shadow, in order").first().isEqualTo("insert");
                assertThat(kinds).filteredOn("read"::equals).as("every later page reads what the shadow holds")
                        .hasSize(4);
                assertThat(kinds).filteredOn("insert"::equals).hasSize(3);
                assertThat(kinds).filteredOn("upsert"::equals).hasSize(3);
                assertThat(kinds).containsOnly("insert", "read", "upsert");
            }
        }
    }

    /**
     * Another run of the replay, on a node that lost the HotCold lock, commits the replay's first page while this
     * node's first page is held before its write: this node's insert into the emptied shadow finds the other's row.
     * That is the same conflict as a moved progression (re-read the replay's row, go on from there), not a failure of
     * the page that would pause the shard.
     */
    @Test
    void aFirstReplayPageThatFindsAnotherRunnersCommittedPageInTheShadowGoesOnFromItsRow() throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowinsertconflict")) {
            StoreOptions options = options(db, false);
            options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100));
            try (DocumentStore store = Ferret.createStore(options)) {
                CompletableFuture<Void> rebuild = rebuildHeldOnItsFirstEvent(store);
                // what the other runner's first page (a1, a2) committed: "a" at 200 and the replay's row at 2
                insertIntoShadow(db, "a", 200);
                db.execute("UPDATE " + db.table("pc_event_progression") + " SET last_seq_id = 2 WHERE name = '"
                        + shard(false) + ShadowReplay.ROW_SUFFIX + "'");

                GATE.open();
                rebuild.get(60, TimeUnit.SECONDS);
                assertThat(read(store, false)).containsOnly(Map.entry("a", 300L), Map.entry("b", 300L),
                        Map.entry("c", 300L));
                await().atMost(WAIT).until(() -> store.daemon().status().healthy());
            } finally {
                GATE.open();
            }
        }
    }

    /**
     * A row in the emptied shadow with the replay's row where the page found it is no other runner's page (something
     * outside Ferret wrote the table): the page fails with the engine's own error, which the paused shard shows.
     */
    @Test
    void aRowInTheEmptiedShadowThatNoRunnerCommittedFailsTheFirstPageWithTheEnginesError() throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowinsertforeign")) {
            try (DocumentStore store = Ferret.createStore(options(db, false))) {
                CompletableFuture<Void> rebuild = rebuildHeldOnItsFirstEvent(store);
                insertIntoShadow(db, "a", 7);

                GATE.open();
                assertThatThrownBy(() -> rebuild.get(60, TimeUnit.SECONDS)).hasMessageContaining("paused");
                ShardStatus paused = store.daemon().shard(shard(false)).orElseThrow();
                assertThat(paused.state()).isEqualTo(ShardState.PAUSED);
                assertThat(paused.error()).isInstanceOf(SQLException.class)
                        .isNotInstanceOf(ProgressionConflictException.class);
                assertThat(read(store, false)).as("the live documents are untouched")
                        .containsOnlyKeys(STREAMS).containsValues(3L);
            } finally {
                GATE.open();
            }
        }
    }

    /**
     * A rebuild's swap replaces every row of the tables its projection writes; where another projection (here an
     * inline one) writes the same table, that would replace the other's documents with none of them: refused,
     * naming the table and both writers, and nothing is touched.
     */
    @Test
    void aRebuildOfAProjectionWhoseTableAnotherProjectionWritesIsRefusedNamingBoth() {
        try (TestDatabase db = TestDatabase.create("shadowsharedtable")) {
            StoreOptions options = options(db, false);
            options.projections().add(Snapshot.of("Inline", Count.class)
                    .create(DaemonFixtures.Hold.class, (id, e) -> new Count(id, -1)), Lifecycle.INLINE);
            try (DocumentStore store = Ferret.createStore(options)) {
                append(store, false, STREAMS, 2);
                store.waitForNonStaleProjectionData(WAIT);

                assertThatThrownBy(() -> store.daemon().rebuild("Count", WAIT))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("rebuild of Count:All refused")
                        .hasMessageContaining("pc_doc_count").hasMessageContaining("Inline, Count");
                assertThat(read(store, false)).containsOnlyKeys(STREAMS).containsValues(2L);
                assertThat(store.daemon().shard(shard(false)).orElseThrow().state()).isEqualTo(ShardState.RUNNING);
            }
        }
    }

    /** Three ticks on each stream, projected; then a rebuild (counting in hundreds) held on its first event. */
    private static CompletableFuture<Void> rebuildHeldOnItsFirstEvent(DocumentStore store) {
        append(store, false, STREAMS, 3);
        store.waitForNonStaleProjectionData(WAIT);
        step = 100;
        GATE.close();
        CompletableFuture<Void> rebuild = CompletableFuture.runAsync(() -> store.daemon().rebuild("Count", WAIT));
        await().atMost(WAIT).until(() -> store.daemon().status().shards().stream()
                .anyMatch(s -> s.state() == ShardState.REBUILDING));
        return rebuild;
    }

    /** Writes a Count straight into the shadow table, as another writer would have. */
    private static void insertIntoShadow(TestDatabase db, String id, long value) throws SQLException {
        Dialect dialect = Dialects.of(db.engine());
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement insert = c.prepareStatement(dialect.documentSql(
                     new TableNames(db.schema(), "pc_"), "count" + ShadowTable.SUFFIX).insert())) {
            insert.setString(1, id);
            insert.setString(2, StoreOptions.DEFAULT_TENANT);
            insert.setString(3, "{\"id\":\"" + id + "\",\"value\":" + value + "}");
            insert.setObject(4, OffsetDateTime.now());
            insert.executeUpdate();
        }
    }

    private static boolean isSwapCopy(String sql) {
        return sql.startsWith("INSERT INTO") && sql.contains("_rebuild") && sql.contains(" SELECT id, tenant_id");
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aSwapWhoseCommitReplyIsLostIsNotDoneAgain(boolean partitioned) throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowlostswap" + partitioned)) {
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            try (DocumentStore store = Ferret.createStore(options(db, partitioned).dataSource(flaky))) {
                append(store, partitioned, STREAMS, 5);
                store.waitForNonStaleProjectionData(WAIT);
                step = 100;
                // the swap's commit reaches the server, then reports a dead connection: its retry must not copy the
                // emptied shadow over the rebuilt documents
                flaky.observeStatements(sql -> {
                    if (isSwapCopy(sql)) {
                        flaky.loseCommitReplies(FlakyDataSource.shardWorkers(), 1);
                    }
                });
                store.daemon().rebuild("Count", WAIT);
                assertThat(flaky.lostReplies()).as("the swap's commit reply was lost").isEqualTo(1);
                assertThat(store.daemon().status().healthy()).as("a lost reply settled leaves nothing to report")
                        .isTrue();
                assertThat(read(store, partitioned)).containsOnlyKeys(STREAMS).containsValues(500L);
                append(store, partitioned, List.of("a"), 1);
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(read(store, partitioned)).containsEntry("a", 600L).containsEntry("b", 500L);
            }
            assertThat(progression(db, shard(partitioned))).isEqualTo(16);
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aSwapThatFailsLeavesTheLiveDocumentsAndTheReplayAsTheyWereUntilARestartSwaps(boolean partitioned)
            throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowfailswap" + partitioned)) {
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            try (DocumentStore store = Ferret.createStore(options(db, partitioned).dataSource(flaky))) {
                append(store, partitioned, STREAMS, 5);
                store.waitForNonStaleProjectionData(WAIT);
                step = 100;
                flaky.failStatements(ShadowRebuildConformanceTest::isSwapCopy);
                assertThatThrownBy(() -> store.daemon().rebuild("Count", WAIT))
                        .isInstanceOf(FerretException.class).hasMessageContaining("paused");
                assertThat(read(store, partitioned)).as("the swap rolled back: the live documents as they were")
                        .containsOnlyKeys(STREAMS).containsValues(5L);
                assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX))
                        .as("the replay reached its target and waits to be swapped").isEqualTo(15);
                assertThat(progression(db, shard(partitioned))).isEqualTo(15);
                // health tells an orchestrator the truth: live (a restart would not help), not healthy (a paused shard)
                DaemonStatus paused = store.daemon().status();
                assertThat(paused.shard(shard(partitioned)).orElseThrow().state()).isEqualTo(ShardState.PAUSED);
                assertThat(paused.live()).isTrue();
                assertThat(paused.healthy()).isFalse();
                assertThat(paused.problems()).anySatisfy(problem -> assertThat(problem).contains("paused"));

                flaky.failStatements(sql -> false);
                store.daemon().restart(shard(partitioned));
                await().atMost(WAIT).until(() -> read(store, partitioned).values().stream()
                        .allMatch(value -> value == 500L));
                assertThat(read(store, partitioned)).containsOnlyKeys(STREAMS);
                await().atMost(WAIT).until(() -> shadowRows(db) == 0);
                await().atMost(WAIT).until(() -> store.daemon().status().healthy());
            }
            assertThat(shadowRows(db)).isZero();
            assertThat(progression(db, shard(partitioned) + ShadowReplay.ROW_SUFFIX)).isEqualTo(-1);
        }
    }

    private static DocumentStore hotColdNode(TestDatabase db, String name) {
        StoreOptions options = options(db, false).dataSource(db.newPool(name));
        options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300)).probeTimeout(Duration.ofMillis(200));
        return Ferret.createStore(options);
    }

    @Test
    void aReplayLeftByANodeThatStoppedIsResumedAndSwappedByTheNodeThatTakesTheShard() throws Exception {
        try (TestDatabase db = TestDatabase.create("shadowhotcold")) {
            DocumentStore a = hotColdNode(db, "a");
            DocumentStore b = hotColdNode(db, "b");
            try {
                await().atMost(WAIT).until(() -> owned(a).size() + owned(b).size() == 1);
                DocumentStore holder = owned(a).isEmpty() ? b : a;
                DocumentStore other = holder == a ? b : a;
                append(holder, false, STREAMS, 5);
                holder.waitForNonStaleProjectionData(WAIT);

                step = 100;
                failAtTick = 4;
                assertThatThrownBy(() -> holder.daemon().rebuild("Count", WAIT))
                        .isInstanceOf(FerretException.class).hasMessageContaining("paused");
                long replayRow = progression(db, shard(false) + ShadowReplay.ROW_SUFFIX);
                assertThat(replayRow).as("the replay committed pages before it stopped").isPositive();

                // the holder stops (a deploy): its lock goes, the other node takes the shard and finds the replay
                failAtTick = 0;
                holder.close();
                await().atMost(WAIT).until(() -> owned(other).size() == 1);
                await().atMost(WAIT).until(() -> read(other, false).values().stream().allMatch(v -> v == 500L));
                assertThat(read(other, false)).containsOnlyKeys(STREAMS);
                await().atMost(WAIT).until(() -> shadowRows(db) == 0);
            } finally {
                a.close();
                b.close();
            }
            assertThat(shadowRows(db)).isZero();
            assertThat(progression(db, shard(false) + ShadowReplay.ROW_SUFFIX)).isEqualTo(-1);
            assertThat(progression(db, shard(false))).isEqualTo(15);
        }
    }

    private static Set<String> owned(DocumentStore store) {
        return ((AsyncDaemon) store.daemon()).ownedShards();
    }

    /** A document of the application's whose table a rebuild's shadow would share. */
    public record Receipt(String id) {
    }

    @Test
    void aDocumentWhoseTableIsAProjectionsRebuildShadowIsRefusedAtStartNamingBoth() {
        try (TestDatabase db = TestDatabase.create("shadowclash")) {
            StoreOptions options = options(db, false);
            options.documents().register(Receipt.class, "count_rebuild", Receipt::id);
            assertThatThrownBy(() -> Ferret.createStore(options))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("pc_doc_count_rebuild")
                    .hasMessageContaining(Receipt.class.getName())
                    .hasMessageContaining("the rebuild shadow of document " + Count.class.getName());
        }
    }
}
