package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pages of several shards of one database commit in one transaction, and each keeps its own meaning: a page that
 * cannot be written, or whose progression moved, rolls its group back and fails alone; the others commit.
 */
@Tag("conformance")
class SharedTransactionsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<String> TENANTS = List.of("acme", "globex", "initech");
    /** The text every engine's progression advance carries: the row moves only from the page's floor. */
    private static final String ADVANCE = "(name, floor, last_seq_id, last_updated)";

    public record Tock(int n) {
    }

    public record TickTotal(String id, long sum) {
    }

    public record Tocks(String id, long count) {
    }

    /** Tally, TickTotal and Tocks: three snapshot projections over tenant-partitioned events. */
    private static StoreOptions threeProjections(TestDatabase db, boolean commitAlone) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.projections().add(DaemonFixtures.tallySnapshot().ownTransaction(commitAlone), Lifecycle.ASYNC);
        options.events().register(Tock.class).partitionByTenant(true);
        options.daemon().workerThreads(4).batchSize(500).sharedTransactions(true);
        options.projections().add(Snapshot.of("TickTotal", TickTotal.class)
                .create(Tick.class, (id, e) -> new TickTotal(id, e.n()))
                .apply(Tick.class, (doc, e) -> new TickTotal(doc.id(), doc.sum() + e.n()))
                .ownTransaction(commitAlone), Lifecycle.ASYNC);
        options.projections().add(Snapshot.of("Tocks", Tocks.class)
                .create(Tock.class, (id, e) -> new Tocks(id, 1))
                .apply(Tock.class, (doc, e) -> new Tocks(doc.id(), doc.count() + 1))
                .ownTransaction(commitAlone), Lifecycle.ASYNC);
        return options;
    }

    /** Ten ticks and three tocks on stream "s" of each tenant, written with the daemon off. */
    private static void appendWithDaemonOff(TestDatabase db) {
        StoreOptions options = threeProjections(db, false);
        options.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore writer = Ferret.createStore(options)) {
            for (String tenant : TENANTS) {
                try (DocumentSession session = writer.openSession(tenant)) {
                    for (int i = 1; i <= 10; i++) {
                        session.events().append("s", new Tick(i));
                        if (i % 3 == 0) {
                            session.events().append("s", new Tock(i));
                        }
                    }
                    session.saveChanges();
                }
            }
        }
    }

    private static void assertTicksProjected(DocumentStore store, String tenant) {
        try (QuerySession query = store.querySession(tenant)) {
            assertThat(query.load(Tally.class, "s").map(Tally::count)).as("Tally of %s", tenant).contains(10L);
            assertThat(query.load(TickTotal.class, "s").map(TickTotal::sum)).as("TickTotal of %s", tenant)
                    .contains(55L);
        }
    }

    private static void assertTocks(DocumentStore store, String tenant, Long expected) {
        try (QuerySession query = store.querySession(tenant)) {
            assertThat(query.load(Tocks.class, "s").map(Tocks::count)).as("Tocks of %s", tenant)
                    .isEqualTo(Optional.ofNullable(expected));
        }
    }

    private static SharedWrites sharedWrites(DocumentStore store) {
        return ((AsyncDaemon) store.daemon()).sharedWrites();
    }

    /**
     * Opens the store with its shards kept from the database until the store is built, and has the first shared
     * transaction wait in its first progression write until two more pages queue behind it, so that the next group
     * takes several pages whatever the machine's speed. {@code alsoInTheGroup} runs on the group's thread, once. A
     * test whose faults may send the first progression write out of a group sets {@code held} first: a page writing
     * alone would wait for a queue that the group's leader keeps emptying.
     */
    private static DocumentStore openHoldingTheFirstGroup(StoreOptions options, FlakyDataSource flaky,
                                                          Runnable alsoInTheGroup, AtomicBoolean held) {
        DocumentStore[] opened = new DocumentStore[1];
        flaky.observeStatements(sql -> {
            if (sql.contains(ADVANCE) && opened[0] != null && held.compareAndSet(false, true)) {
                SharedWrites writes = sharedWrites(opened[0]);
                await().atMost(WAIT).until(() -> writes.queued(StoreOptions.DEFAULT_DATABASE) >= 2);
                alsoInTheGroup.run();
            }
        });
        flaky.refuseTo(FlakyDataSource.shardWorkers());
        DocumentStore store = Ferret.createStore(options.dataSource(flaky));
        opened[0] = store;
        flaky.refuseTo(thread -> false);
        return store;
    }

    private static ShardStatus shard(DocumentStore store, String name) {
        return store.daemon().shard(name).orElseThrow();
    }

    @Test
    void theReadyPagesOfADatabaseCommitTogetherAndEveryDocumentIsExact() {
        try (TestDatabase db = TestDatabase.create("sharedtx")) {
            appendWithDaemonOff(db);
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            try (DocumentStore store = openHoldingTheFirstGroup(threeProjections(db, false), flaky, () -> { },
                    new AtomicBoolean())) {
                store.waitForNonStaleProjectionData(WAIT);
                for (String tenant : TENANTS) {
                    assertTicksProjected(store, tenant);
                    assertTocks(store, tenant, 3L);
                }
                SharedWrites writes = sharedWrites(store);
                assertThat(writes.grouped()).as("some group held more than one page").isGreaterThan(writes.groups());
            }
        }
    }

    @Test
    void aPageThatCannotBeWrittenFailsAloneAndTheOthersOfItsGroupCommit() {
        try (TestDatabase db = TestDatabase.create("sharedtxfault")) {
            appendWithDaemonOff(db);
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            AtomicBoolean held = new AtomicBoolean();
            // every write of a Tocks document fails, in a group or alone
            flaky.failStatements(sql -> {
                String text = sql.toLowerCase(Locale.ROOT);
                boolean fails = text.contains("tocks") && !text.startsWith("select") && !text.startsWith("create")
                        && !text.startsWith("alter");
                if (fails) {
                    held.set(true);
                }
                return fails;
            });
            try (DocumentStore store = openHoldingTheFirstGroup(threeProjections(db, false), flaky, () -> { },
                    held)) {
                await().atMost(WAIT).untilAsserted(() -> {
                    for (String tenant : TENANTS) {
                        assertTicksProjected(store, tenant);
                    }
                });
                for (String tenant : TENANTS) {
                    assertTocks(store, tenant, null);
                    assertThat(shard(store, "Tocks:All@" + tenant).progression()).as("Tocks of %s", tenant)
                            .isZero();
                }
                // healed, the failing shards catch up from where they stood
                flaky.failStatements(sql -> false);
                for (String tenant : TENANTS) {
                    if (shard(store, "Tocks:All@" + tenant).state() == ShardState.PAUSED) {
                        store.daemon().restart("Tocks:All@" + tenant);
                    }
                }
                store.waitForNonStaleProjectionData(WAIT);
                for (String tenant : TENANTS) {
                    assertTicksProjected(store, tenant);
                    assertTocks(store, tenant, 3L);
                }
            }
        }
    }

    @Test
    void aShardWhoseProgressionMovedPausesAloneAndTheOthersOfItsGroupCommit() {
        try (TestDatabase db = TestDatabase.create("sharedtxconflict")) {
            appendWithDaemonOff(db);
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            // another runner commits a page of Tocks@acme while the first group writes
            Runnable anotherRunner = () -> db.execute("INSERT INTO " + db.table("pc_event_progression")
                    + " (name, last_seq_id, last_updated) VALUES ('Tocks:All@acme', 2, CURRENT_TIMESTAMP)");
            try (DocumentStore store = openHoldingTheFirstGroup(threeProjections(db, false), flaky, anotherRunner,
                    new AtomicBoolean())) {
                await().atMost(WAIT).until(() -> shard(store, "Tocks:All@acme").state() == ShardState.PAUSED);
                assertThat(shard(store, "Tocks:All@acme").error()).isInstanceOf(ProgressionConflictException.class);
                await().atMost(WAIT).untilAsserted(() -> {
                    for (String tenant : TENANTS) {
                        assertTicksProjected(store, tenant);
                    }
                    assertTocks(store, "globex", 3L);
                    assertTocks(store, "initech", 3L);
                });
                assertTocks(store, "acme", null);
                assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                        + " WHERE name = 'Tocks:All@acme'")).as("the other runner's row stands").isEqualTo(2);
            }
        }
    }

    @Test
    void noPageIsSharedWhenTheSettingIsOffOrItsProjectionCommitsAlone() {
        try (TestDatabase db = TestDatabase.create("sharedtxoff")) {
            appendWithDaemonOff(db);
            StoreOptions off = threeProjections(db, false);
            off.daemon().sharedTransactions(false);
            try (DocumentStore store = Ferret.createStore(off)) {
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(sharedWrites(store).enabled()).isFalse();
                assertThat(sharedWrites(store).groups()).isZero();
            }
        }
        try (TestDatabase db = TestDatabase.create("sharedtxalone")) {
            appendWithDaemonOff(db);
            try (DocumentStore store = Ferret.createStore(threeProjections(db, true))) {
                store.waitForNonStaleProjectionData(WAIT);
                for (String tenant : TENANTS) {
                    assertTicksProjected(store, tenant);
                    assertTocks(store, tenant, 3L);
                }
                assertThat(sharedWrites(store).enabled()).isTrue();
                assertThat(sharedWrites(store).groups()).as("every projection asked for its own transactions")
                        .isZero();
            }
        }
    }

    @Test
    void aGroupWhoseCommitReplyIsLostLeavesEveryMemberReadingItsOwnProgressionBack() {
        try (TestDatabase db = TestDatabase.create("sharedtxlost")) {
            appendWithDaemonOff(db);
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            // the first commit on a shard worker, the held first group's, reaches the server and its reply is lost
            flaky.loseCommitReplies(FlakyDataSource.shardWorkers(), 1);
            try (DocumentStore store = openHoldingTheFirstGroup(threeProjections(db, false), flaky, () -> { },
                    new AtomicBoolean())) {
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(flaky.lostReplies()).isEqualTo(1);
                for (String tenant : TENANTS) {
                    assertTicksProjected(store, tenant);
                    assertTocks(store, tenant, 3L);
                }
                assertThat(store.daemon().status().shards()).as("nothing paused, nothing applied twice")
                        .allSatisfy(shard -> assertThat(shard.state()).isEqualTo(ShardState.RUNNING));
            }
        }
    }
}
