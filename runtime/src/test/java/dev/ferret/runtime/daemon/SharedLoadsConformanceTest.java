package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The shards that read the same slice of the log from the same floor read it once: a tenant's projections, or the
 * projections of an unpartitioned store. Each keeps only the events it wants, and one shard's poison stays its own.
 */
@Tag("conformance")
class SharedLoadsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<String> TENANTS = List.of("acme", "globex", "initech");

    /** An event only the {@link Tocks} projection wants. */
    public record Tock(int n) {
    }

    public record TickTotal(String id, long sum) {
    }

    public record Tocks(String id, long count) {
    }

    @AfterEach
    void poisonousAgain() {
        DaemonFixtures.poisonous = true;
    }

    private static StoreOptions threeProjections(TestDatabase db, boolean partitioned) {
        StoreOptions options = DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db));
        options.events().register(Tock.class).partitionByTenant(partitioned);
        options.daemon().workerThreads(4).batchSize(500);
        options.projections().add(Snapshot.of("TickTotal", TickTotal.class)
                .create(Tick.class, (id, e) -> new TickTotal(id, e.n()))
                .apply(Tick.class, (doc, e) -> new TickTotal(doc.id(), doc.sum() + e.n())), Lifecycle.ASYNC);
        options.projections().add(Snapshot.of("Tocks", Tocks.class)
                .create(Tock.class, (id, e) -> new Tocks(id, 1))
                .apply(Tock.class, (doc, e) -> new Tocks(doc.id(), doc.count() + 1)), Lifecycle.ASYNC);
        return options;
    }

    /** Ten ticks and four tocks on stream "s" of each tenant (or of the store), written with the daemon off. */
    private static void appendWithDaemonOff(TestDatabase db, boolean partitioned) {
        StoreOptions options = threeProjections(db, partitioned);
        options.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore writer = Ferret.createStore(options)) {
            for (String tenant : partitioned ? TENANTS : List.of("acme")) {
                try (DocumentSession session = partitioned ? writer.openSession(tenant) : writer.openSession()) {
                    for (int i = 1; i <= 10; i++) {
                        session.events().append("s", new Tick(i));
                        if (i % 3 == 0) {
                            session.events().append("s", new Tock(i));
                        }
                    }
                    session.events().append("t", new Tock(0));
                    session.saveChanges();
                }
            }
        }
    }

    /** How many page loads the store's daemon reads through {@code counted}'s statements. */
    private static AtomicInteger countPageLoads(FlakyDataSource counted) {
        AtomicInteger loads = new AtomicInteger();
        counted.observeStatements(sql -> {
            if (sql.contains("ORDER BY tenant_seq") || sql.contains("ORDER BY seq_id") && sql.contains("seq_id <= ?")
                    && !sql.contains("tenant_seq")) {
                loads.incrementAndGet();
            }
        });
        return loads;
    }

    private static void assertProjected(DocumentStore store, boolean partitioned) {
        for (String tenant : partitioned ? TENANTS : List.of("acme")) {
            try (QuerySession query = partitioned ? store.querySession(tenant) : store.querySession()) {
                assertThat(query.load(Tally.class, "s").orElseThrow().count()).as("Tally of %s", tenant).isEqualTo(10);
                assertThat(query.load(TickTotal.class, "s").orElseThrow().sum()).as("TickTotal of %s", tenant)
                        .isEqualTo(55);
                assertThat(query.load(Tocks.class, "s").orElseThrow().count()).as("Tocks of %s", tenant).isEqualTo(3);
                assertThat(query.load(Tocks.class, "t").orElseThrow().count()).isEqualTo(1);
                assertThat(query.load(Tally.class, "t")).as("Tally wants no tocks").isEmpty();
            }
        }
    }

    @Test
    void aTenantsProjectionsReadItsPageOnceAndEachKeepsTheEventsItWants() {
        try (TestDatabase db = TestDatabase.create("sharedtenant")) {
            StoreOptions options = threeProjections(db, true);
            appendWithDaemonOff(db, true);
            FlakyDataSource counted = new FlakyDataSource(db.dataSource());
            AtomicInteger loads = countPageLoads(counted);
            try (DocumentStore store = Ferret.createStore(options.dataSource(counted))) {
                store.waitForNonStaleProjectionData(WAIT);
                assertProjected(store, true);
            }
            assertThat(loads.get()).as("one load per tenant for its three shards").isEqualTo(TENANTS.size());
        }
    }

    @Test
    void everyShardReadsItsOwnPagesWhenSharingIsOff() {
        try (TestDatabase db = TestDatabase.create("sharedoff")) {
            StoreOptions options = threeProjections(db, true);
            options.daemon().sharedLoadMegabytes(0);
            appendWithDaemonOff(db, true);
            FlakyDataSource counted = new FlakyDataSource(db.dataSource());
            AtomicInteger loads = countPageLoads(counted);
            try (DocumentStore store = Ferret.createStore(options.dataSource(counted))) {
                store.waitForNonStaleProjectionData(WAIT);
                assertProjected(store, true);
            }
            assertThat(loads.get()).as("one load per shard").isEqualTo(3 * TENANTS.size());
        }
    }

    @Test
    void theProjectionsOfAnUnpartitionedStoreShareTheirPagesToo() {
        try (TestDatabase db = TestDatabase.create("sharedwhole")) {
            StoreOptions options = threeProjections(db, false);
            appendWithDaemonOff(db, false);
            FlakyDataSource counted = new FlakyDataSource(db.dataSource());
            AtomicInteger loads = countPageLoads(counted);
            try (DocumentStore store = Ferret.createStore(options.dataSource(counted))) {
                store.waitForNonStaleProjectionData(WAIT);
                assertProjected(store, false);
            }
            assertThat(loads.get()).isEqualTo(1);
        }
    }

    @Test
    void aPoisonEventPausesOnlyTheShardThatFailsOnIt() {
        try (TestDatabase db = TestDatabase.create("sharedpoison")) {
            StoreOptions options = threeProjections(db, true);
            options.events().register(Poison.class);
            appendWithDaemonOff(db, true);
            try (DocumentStore store = Ferret.createStore(options)) {
                store.waitForNonStaleProjectionData(WAIT);
                try (DocumentSession session = store.openSession("acme")) {
                    session.events().append("s", new Poison("bad"));
                    session.events().append("s", new Tick(11));
                    session.events().append("s", new Tock(12));
                    session.saveChanges();
                }
                await().atMost(WAIT).until(() -> store.daemon().shard("Tally:All@acme").orElseThrow().state()
                        == ShardState.PAUSED);
                // the other two shards of the tenant read the same page and apply all of it
                await().atMost(WAIT).untilAsserted(() -> {
                    try (QuerySession acme = store.querySession("acme")) {
                        assertThat(acme.load(TickTotal.class, "s").orElseThrow().sum()).isEqualTo(66);
                        assertThat(acme.load(Tocks.class, "s").orElseThrow().count()).isEqualTo(4);
                    }
                });
                try (QuerySession acme = store.querySession("acme")) {
                    assertThat(acme.load(Tally.class, "s").orElseThrow().count())
                            .as("Tally stopped before the poison").isEqualTo(10);
                }
                for (String tenant : List.of("globex", "initech")) {
                    assertThat(store.daemon().shard("Tally:All@" + tenant).orElseThrow().state())
                            .isEqualTo(ShardState.RUNNING);
                }
            }
        }
    }
}
