package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pages that committed and that the database then lost (a server crash after commits that did not wait for the
 * flush, emulated by commits that report success and roll back) are applied again from the progression row that
 * stayed behind, under SOLO too: found by the next page (its row is not where the shard left it), or, for a shard
 * with no next page, after the daemon could not reach the database. The shard never pauses for it and every event
 * counts once in the end.
 */
@Tag("conformance")
class LostPagesConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SHARD = "Tally:All";

    private static StoreOptions options(TestDatabase db, FlakyDataSource flaky) {
        return DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db)).dataSource(flaky);
    }

    private static Map<String, Long> counts(DocumentStore store) {
        Map<String, Long> values = new HashMap<>();
        try (QuerySession query = store.querySession()) {
            query.query(Tally.class).toList().forEach(tally -> values.put(tally.id(), tally.count()));
        }
        return values;
    }

    private static ShardStatus shard(DocumentStore store) {
        return store.daemon().shard(SHARD).orElseThrow();
    }

    private static long row(TestDatabase db) {
        return row(db, SHARD);
    }

    private static long row(TestDatabase db, String shard) {
        return db.queryLong("SELECT COALESCE(MAX(last_seq_id), 0) FROM " + db.table("pc_event_progression")
                + " WHERE name = '" + shard + "'");
    }

    @Test
    void theNextPageFindsTheRowBehindAndAppliesTheLostPagesAgain() {
        try (TestDatabase db = TestDatabase.create("lostpagesnext")) {
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            try (DocumentStore store = Ferret.createStore(options(db, flaky))) {
                DaemonFixtures.appendTicks(store, "a", 2);
                store.waitForNonStaleProjectionData(WAIT);
                flaky.forgetCommits(FlakyDataSource.shardWorkers(), 1);

                DaemonFixtures.appendTicks(store, "a", 3);
                await().atMost(WAIT).until(() -> flaky.forgottenCommits() == 1 && shard(store).progression() == 5);
                assertThat(row(db)).as("the row the lost commit left behind").isEqualTo(2);
                assertThat(counts(store)).as("the lost page's documents are gone with it")
                        .containsOnly(Map.entry("a", 2L));

                DaemonFixtures.appendTicks(store, "b", 1);
                await().atMost(WAIT).until(() -> row(db) == 6);
                assertThat(counts(store)).containsOnly(Map.entry("a", 5L), Map.entry("b", 1L));
                assertThat(shard(store).state()).isEqualTo(ShardState.RUNNING);
                await().atMost(WAIT).until(() -> store.daemon().status().healthy());
            }
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void anIdleShardLooksForLostPagesOnceItsDatabaseIsReachableAgain(boolean partitioned) {
        String shard = partitioned ? SHARD + "@acme" : SHARD;
        try (TestDatabase db = TestDatabase.create("lostpagesidle" + partitioned)) {
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            StoreOptions options = options(db, flaky);
            options.events().partitionByTenant(partitioned);
            try (DocumentStore store = Ferret.createStore(options)) {
                flaky.forgetCommits(FlakyDataSource.shardWorkers(), 1);
                try (DocumentSession session = partitioned ? store.openSession("acme") : store.openSession()) {
                    for (int i = 1; i <= 3; i++) {
                        session.events().append("a", new Tick(i));
                    }
                    session.saveChanges();
                }
                await().atMost(WAIT).until(() -> flaky.forgottenCommits() == 1
                        && store.daemon().shard(shard).map(ShardStatus::progression).orElse(0L) == 3);
                assertThat(row(db, shard)).isZero();

                // the server restarts: the detector's polls fail for a while, then reach it again
                int refusedBefore = flaky.refusals();
                flaky.refuseTo(thread -> thread.getName().contains("scheduler"));
                await().atMost(WAIT).until(() -> flaky.refusals() > refusedBefore);
                flaky.refuseTo(thread -> false);

                await().atMost(WAIT).until(() -> row(db, shard) == 3);
                try (QuerySession query = partitioned ? store.querySession("acme") : store.querySession()) {
                    assertThat(query.load(Tally.class, "a")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(3));
                }
                assertThat(store.daemon().shard(shard).orElseThrow().state()).isEqualTo(ShardState.RUNNING);
                await().atMost(WAIT).until(() -> store.daemon().status().healthy());
            }
        }
    }

    /**
     * Where every page's commit waits for the flush, nothing committed can be lost: a row behind the floor is not a
     * lost page, and the shard pauses on the conflict as before.
     */
    @Test
    void withCommitsThatWaitForTheFlushARowBehindTheFloorStaysAConflict() {
        try (TestDatabase db = TestDatabase.create("lostpagesoff")) {
            FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
            StoreOptions options = options(db, flaky);
            options.daemon().asyncPageCommits(false);
            try (DocumentStore store = Ferret.createStore(options)) {
                flaky.forgetCommits(FlakyDataSource.shardWorkers(), 1);
                DaemonFixtures.appendTicks(store, "a", 3);
                await().atMost(WAIT).until(() -> flaky.forgottenCommits() == 1 && shard(store).progression() == 3);

                DaemonFixtures.appendTicks(store, "b", 1);
                await().atMost(WAIT).until(() -> shard(store).state() == ShardState.PAUSED);
                assertThat(shard(store).error()).isInstanceOf(ProgressionConflictException.class);
                assertThat(store.daemon().status().healthy()).as("a paused shard is reported").isFalse();
            }
        }
    }
}
