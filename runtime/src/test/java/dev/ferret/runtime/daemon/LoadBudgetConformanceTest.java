package dev.ferret.runtime.daemon;

import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.metrics.ShardLabel;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.EventEnvelope;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.DocumentSession;
import dev.ferret.QuerySession;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The budget inside a running daemon, on each engine; {@link LoadBudgetTest} covers the budget alone. */
@Tag("conformance")
class LoadBudgetConformanceTest {

    @Test
    void manyShardsUnderABudgetOfOnePageAllFinishTheirFold() {
        try (TestDatabase db = TestDatabase.create("budget")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().tenantLoadBudget(1).maxConcurrentEventLoadsPerDatabase(1)
                    .maxConcurrentBatchWritesPerDatabase(1);
            for (int i = 0; i < 4; i++) {
                options.projections().add(Snapshot.of("Tally" + i, Tally.class)
                        .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                        .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n())),
                        Lifecycle.ASYNC);
            }
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "b", 200);
                store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
                assertThat(store.daemon().status().shards()).hasSize(4)
                        .allSatisfy(shard -> assertThat(shard.lag()).isZero());
                assertThat(store.daemon().status().healthy()).isTrue();
            }
        }
    }

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A wide document: one of the many an event fans out to. */
    public record Sheet(String id, String text) {
    }

    /** Each event fans out to {@value #SHEETS} documents of about 2 KB each. */
    static final class FansOut extends EventProjection {
        static final int SHEETS = 200;

        FansOut() {
            super("FansOut");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            for (int i = 0; i < SHEETS; i++) {
                operations.store(new Sheet(event.sequence() + "-" + i, "x".repeat(1_000)));
            }
        }
    }

    /** Each event rewrites the same {@value #SHEETS} documents of about 2 KB: a page keeps 200, whatever its events. */
    static final class RewritesTheSame extends EventProjection {
        static final int SHEETS = 200;

        RewritesTheSame() {
            super("RewritesTheSame");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            for (int i = 0; i < SHEETS; i++) {
                operations.store(new Sheet("same-" + i, event.sequence() + "x".repeat(1_000)));
            }
        }
    }

    @Test
    void eventsThatRewriteTheSameDocumentsWeighWhatTheyBuildNotWhatThePageKeeps() {
        List<Integer> pages = new CopyOnWriteArrayList<>();
        try (TestDatabase db = TestDatabase.create("budgetrewrites");
             DocumentStore store = underAMebibyte(db, new RewritesTheSame(), pages)) {
            appendTicks(store, "t", 30);
            store.waitForNonStaleProjectionData(WAIT);
            // an event builds about 400 KB: one or two fit a MiB, though any page keeps only 200 documents
            assertThat(pages.get(0)).as("the first page").isEqualTo(1);
            assertThat(pages.subList(1, pages.size())).as("pages after the first")
                    .allSatisfy(events -> assertThat(events).isBetween(1, 2));
            assertThat(pages.stream().mapToInt(Integer::intValue).sum()).isEqualTo(30);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_sheet")))
                    .isEqualTo(RewritesTheSame.SHEETS);
        }
    }

    @Test
    void aProjectionThatFansEachEventOutLearnsItsWeightAndTakesPagesOfFewEventsUnderAByteBudget() {
        List<Integer> pages = new CopyOnWriteArrayList<>();
        try (TestDatabase db = TestDatabase.create("budgetbytes");
             DocumentStore store = underAMebibyte(db, new FansOut(), pages)) {
            appendTicks(store, "t", 20);
            store.waitForNonStaleProjectionData(WAIT);
            int firstPages = pages.size();
            // nothing known yet: the first page probes one event, and the next ones already fit the budget
            assertThat(pages.get(0)).as("the first page").isEqualTo(1);
            assertThat(pages.subList(1, firstPages)).allSatisfy(events -> assertThat(events).isBetween(1, 2));
            // learnt from its first pages: an event of this shard weighs about 400 KB once applied
            appendTicks(store, "t", 20);
            store.waitForNonStaleProjectionData(WAIT);

            List<Integer> later = pages.subList(firstPages, pages.size());
            assertThat(later).as("events per page once the weight is known").isNotEmpty()
                    .allSatisfy(events -> assertThat(events).isBetween(1, 2));
            assertThat(later.stream().mapToInt(Integer::intValue).sum()).isEqualTo(20);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_sheet")))
                    .isEqualTo(40L * FansOut.SHEETS);
            assertThat(budgetOf(store).peakBytesInFlight()).isLessThanOrEqualTo(1 << 20);
        }
    }

    /** A store whose one projection runs under a 1 MiB byte budget, each page's event count added to {@code pages}. */
    private static DocumentStore underAMebibyte(TestDatabase db, EventProjection projection, List<Integer> pages) {
        DaemonMetrics pageSizes = new DaemonMetrics() {
            @Override
            public void pageCommitted(ShardLabel shard, List<EventEnvelope> events, Duration duration,
                                      OffsetDateTime visibleAt, boolean replaying) {
                pages.add(events.size());
            }
        };
        StoreOptions options = fastDaemon(db);
        options.daemon().tenantLoadBudgetMegabytes(1);
        options.documents().register(Sheet.class);
        options.projections().add(projection, Lifecycle.ASYNC);
        return Ferret.createStore(options, StoreSeams.defaults().withMetrics(pageSizes));
    }

    private static LoadBudget budgetOf(DocumentStore store) {
        return ((AsyncDaemon) store.daemon()).budget();
    }

    private static StoreOptions tenantAgents(TestDatabase db, long budget) {
        StoreOptions options = fastDaemon(db);
        options.events().partitionByTenant(true);
        options.daemon().tenantLoadBudget(budget).workerThreads(6);
        return options;
    }

    private static void appendTicks(DocumentStore store, String tenant, int count) {
        try (DocumentSession session = store.openSession(tenant)) {
            for (int i = 1; i <= count; i++) {
                session.events().append("s", new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static ShardStatus shard(DocumentStore store, String name) {
        return store.daemon().status().shards().stream().filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no shard " + name));
    }

    @Test
    void manyTenantAgentsUnderABudgetOfOnePageAllFinishAndTheBudgetIsNeverExceeded() {
        try (TestDatabase db = TestDatabase.create("tbudget")) {
            StoreOptions options = tenantAgents(db, 50); // one page of the fast daemon's 50 events
            options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                for (int t = 0; t < 12; t++) {
                    appendTicks(store, "tenant-" + t, 120 + t);
                }
                store.waitForNonStaleProjectionData(WAIT);
                for (int t = 0; t < 12; t++) {
                    try (QuerySession session = store.querySession("tenant-" + t)) {
                        long expected = 120 + t;
                        assertThat(session.load(Tally.class, "s"))
                                .hasValueSatisfying(tally -> assertThat(tally.count()).isEqualTo(expected));
                    }
                }
                LoadBudget budget = budgetOf(store);
                assertThat(budget.peakInFlight()).isBetween(1L, 50L);
                assertThat(budget.inFlight()).isZero();
                assertThat(budget.waiting()).isZero();
                assertThat(budget.grants()).isGreaterThanOrEqualTo(12 * 3);
            }
        }
    }

    /**
     * Counts the pages being applied at once in each database. Applying runs inside the write cap, so that count is
     * what the cap bounds. The first page of each database waits until the other database has one too: only a cap
     * kept per database lets both in at once.
     */
    static final class CountsPagesPerDatabase extends EventProjection {
        final Set<String> farTenants;
        final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> peak = new ConcurrentHashMap<>();
        final CountDownLatch bothDatabasesInside = new CountDownLatch(2);
        final Set<String> arrived = ConcurrentHashMap.newKeySet();
        final Set<String> metTheOtherInside = ConcurrentHashMap.newKeySet();

        CountsPagesPerDatabase(Set<String> farTenants) {
            super("Counts");
            this.farTenants = farTenants;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            String database = farTenants.contains(event.tenantId()) ? "far" : "default";
            int now = inFlight.computeIfAbsent(database, d -> new AtomicInteger()).incrementAndGet();
            peak.computeIfAbsent(database, d -> new AtomicInteger()).accumulateAndGet(now, Math::max);
            try {
                if (arrived.add(database)) {
                    bothDatabasesInside.countDown();
                    if (bothDatabasesInside.await(60, TimeUnit.SECONDS)) {
                        metTheOtherInside.add(database);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("cancelled in the page", e);
            } finally {
                inFlight.get(database).decrementAndGet();
            }
        }
    }

    @Test
    void theBatchWriteCapHoldsInEachDatabaseAndNotAcrossThem() throws Exception {
        try (TestDatabase db = TestDatabase.create("wcap");
             TestDatabase far = db.sibling("far")) {
            StoreOptions options = tenantAgents(db, 0);
            options.daemon().maxConcurrentBatchWritesPerDatabase(1).maxConcurrentEventLoadsPerDatabase(1);
            options.tenancy().database("far", far.dataSource(), "far-1", "far-2", "far-3");
            CountsPagesPerDatabase counts = new CountsPagesPerDatabase(Set.of("far-1", "far-2", "far-3"));
            options.projections().add(counts, Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                for (String tenant : List.of("near-1", "near-2", "near-3", "far-1", "far-2", "far-3")) {
                    appendTicks(store, tenant, 120);
                }
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(counts.metTheOtherInside).as("databases whose first page met the other's inside")
                        .containsExactlyInAnyOrder("default", "far");
                assertThat(counts.peak.get("default")).hasValue(1);
                assertThat(counts.peak.get("far")).hasValue(1);
                assertThat(store.daemon().status().shards()).hasSize(6)
                        .allSatisfy(shard -> assertThat(shard.lag()).isZero());
            }
        }
    }

    @Test
    void aTenantWaitingForRoomStaysRunningAndTheDrainCancelsItAndTheBlockedPageReturningAllRoom() throws Exception {
        try (TestDatabase db = TestDatabase.create("tbdrain")) {
            DaemonFixtures.BlocksTenant blocks = new DaemonFixtures.BlocksTenant("BlocksBig", "big");
            StoreOptions options = tenantAgents(db, 50);
            options.daemon().stopAndDrainTimeout(Duration.ofSeconds(1));
            options.projections().add(blocks, Lifecycle.ASYNC);
            DocumentStore store = Ferret.createStore(options);
            LoadBudget budget = budgetOf(store);
            try {
                appendTicks(store, "big", 50);
                assertThat(blocks.entered.await(60, TimeUnit.SECONDS)).isTrue();
                appendTicks(store, "small", 5);
                await().atMost(WAIT).until(() -> budget.waiting() == 1);

                // waiting in line is not a pause, a retry or a failure
                assertThat(shard(store, "BlocksBig:All@small").state()).isEqualTo(ShardState.RUNNING);
                assertThat(shard(store, "BlocksBig:All@small").error()).isNull();
                assertThat(store.daemon().status().healthy()).isTrue();
                assertThat(budget.inFlight()).isEqualTo(50);
            } finally {
                store.close(); // the drain bound: the blocked page is cancelled, the waiter gives up
            }
            assertThat(budget.inFlight()).isZero();
            assertThat(budget.waiting()).isZero();
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_event_progression")
                    + " WHERE name = 'BlocksBig:All@big' AND last_seq_id > 0")).as("rolled back").isZero();

            // nothing was lost: the next owner does both tenants' pages
            blocks.release.countDown();
            try (DocumentStore next = Ferret.createStore(options)) {
                next.waitForNonStaleProjectionData(WAIT);
                assertThat(shard(next, "BlocksBig:All@big").progression()).isEqualTo(50);
                assertThat(shard(next, "BlocksBig:All@small").progression()).isEqualTo(5);
            }
        }
    }

    /** Connections whose tenant page load blocks until interrupted while {@link #stuck} is open. */
    private static DataSource stuckLoads(DataSource target, CountDownLatch stuck, CountDownLatch entered) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, target, args);
                    if (!method.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection connection = (Connection) result;
                    return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (p, m, a) -> {
                                if (m.getName().equals("prepareStatement") && stuck.getCount() > 0
                                        && String.valueOf(a[0]).contains("ORDER BY tenant_seq")) {
                                    entered.countDown();
                                    try {
                                        stuck.await(); // until the drain cancels the page
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                        throw new SQLException("load cancelled", e);
                                    }
                                }
                                return invoke(m, connection, a);
                            });
                });
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Tenant agents folding the tally over {@code dataSource}, with a one-second drain bound. */
    private static StoreOptions tallyWithShortDrain(TestDatabase db, DataSource dataSource) {
        StoreOptions options = tenantAgents(db, 500);
        options.dataSource(dataSource);
        options.daemon().stopAndDrainTimeout(Duration.ofSeconds(1));
        options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.ASYNC);
        return options;
    }

    @Test
    void theDrainCancelsAnAgentStuckLoadingAndReturnsItsReservation() throws Exception {
        try (TestDatabase db = TestDatabase.create("tbload")) {
            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch entered = new CountDownLatch(1);
            StoreOptions options = tallyWithShortDrain(db, stuckLoads(db.dataSource(), stuck, entered));
            DocumentStore store = Ferret.createStore(options);
            LoadBudget budget = budgetOf(store);
            try {
                appendTicks(store, "acme", 10);
                assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();
                assertThat(budget.inFlight()).as("reserved before the load").isEqualTo(50);
            } finally {
                store.close();
            }
            assertThat(budget.inFlight()).isZero();
            stuck.countDown();
            try (DocumentStore next = Ferret.createStore(options)) {
                next.waitForNonStaleProjectionData(WAIT);
                assertThat(shard(next, "Tally:All@acme").progression()).isEqualTo(10);
            }
        }
    }

    /**
     * Records every abort of a connection its borrower had already closed, and holds the first connection a shard
     * asks for after closing its page load until the drain interrupts it: a shard caught between load and write.
     */
    private static DataSource abortsAfterClose(DataSource target, List<String> abortedAfterClose,
                                               CountDownLatch betweenLoadAndWrite) {
        ThreadLocal<Boolean> justLoaded = ThreadLocal.withInitial(() -> false);
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && justLoaded.get()
                            && betweenLoadAndWrite.getCount() > 0) {
                        betweenLoadAndWrite.countDown();
                        try {
                            new CountDownLatch(1).await(); // until the drain cancels the page
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new SQLException("write cancelled", e);
                        }
                    }
                    Object result = invoke(method, target, args);
                    if (!method.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection connection = (Connection) result;
                    AtomicBoolean closed = new AtomicBoolean();
                    AtomicBoolean loads = new AtomicBoolean();
                    return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (p, m, a) -> {
                                switch (m.getName()) {
                                    case "prepareStatement" -> {
                                        if (String.valueOf(a[0]).contains("ORDER BY tenant_seq")) {
                                            loads.set(true);
                                        }
                                    }
                                    case "close" -> {
                                        closed.set(true);
                                        justLoaded.set(loads.get());
                                    }
                                    case "abort" -> {
                                        if (closed.get()) {
                                            abortedAfterClose.add(Thread.currentThread().getName());
                                            return null;
                                        }
                                    }
                                    default -> { }
                                }
                                return invoke(m, connection, a);
                            });
                });
    }

    @Test
    void theDrainNeverAbortsALoadConnectionAlreadyBackInThePool() throws Exception {
        try (TestDatabase db = TestDatabase.create("tbabort")) {
            List<String> abortedAfterClose = new CopyOnWriteArrayList<>();
            CountDownLatch betweenLoadAndWrite = new CountDownLatch(1);
            StoreOptions options = tallyWithShortDrain(db, abortsAfterClose(db.dataSource(), abortedAfterClose, betweenLoadAndWrite));
            DocumentStore store = Ferret.createStore(options);
            LoadBudget budget = budgetOf(store);
            try {
                appendTicks(store, "acme", 10);
                assertThat(betweenLoadAndWrite.await(60, TimeUnit.SECONDS)).isTrue();
            } finally {
                store.close(); // the drain bound cancels the page held between its load and its write
            }
            assertThat(abortedAfterClose).as("aborts of connections already closed by their borrower").isEmpty();
            assertThat(budget.inFlight()).isZero();
        }
    }
}
