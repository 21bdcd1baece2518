package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code asyncPageCommits}: on PostgreSQL each page's transaction lets its commit skip the wait for the WAL flush, for
 * that transaction only (a page that raises events excepted); off, or on another engine, nothing is sent. The pages commit either way.
 */
@Tag("conformance")
class AsyncPageCommitsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF";

    @ParameterizedTest(name = "asyncPageCommits: {0}")
    @ValueSource(booleans = {true, false})
    void eachPageOnPostgresqlCommitsWithoutWaitingForTheFlushWhenAsked(boolean on) {
        try (TestDatabase db = TestDatabase.create("asynccommits" + on)) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> statements = new CopyOnWriteArrayList<>();
            observed.observeStatements(statements::add);
            StoreOptions options = DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db)).dataSource(observed);
            options.daemon().asyncPageCommits(on).batchSize(2).maxBatchGrowth(1);
            try (DocumentStore store = Ferret.createStore(options)) {
                DaemonFixtures.appendTicks(store, "a", 6);
                store.waitForNonStaleProjectionData(WAIT);
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Tally.class, "a")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(6));
                }
            }
            // sent with each page's progression write, in one round trip
            long sent = statements.stream().filter(sql -> sql.startsWith(ASYNC_COMMIT)).count();
            if (on && db.engine() == DatabaseEngine.POSTGRESQL) {
                assertThat(sent).as("one per page of two events, at least").isGreaterThanOrEqualTo(3);
            } else {
                assertThat(sent).isZero();
            }
        }
    }

    /**
     * A page that raises events commits waiting for the flush: were it lost, the sequence numbers it drew could be
     * handed out again below marks the daemon has already passed.
     */
    @Test
    void aPageThatRaisesEventsWaitsForTheFlush() {
        try (TestDatabase db = TestDatabase.create("asyncraised")) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> advances = new CopyOnWriteArrayList<>();
            observed.observeStatements(sql -> {
                if (sql.contains("pc_event_progression") && sql.contains("moved AS (UPDATE")) {
                    advances.add(sql);
                }
            });
            StoreOptions options = DaemonFixtures.fastDaemon(db).dataSource(observed);
            options.events().register(OutboxConformanceTest.Echo.class);
            options.projections().add(OutboxConformanceTest.outboxed(true), Lifecycle.ASYNC).publishMessages(m -> { });
            options.daemon().asyncPageCommits(true).batchSize(2).maxBatchGrowth(1);
            try (DocumentStore store = Ferret.createStore(options)) {
                DaemonFixtures.appendTicks(store, "a", 2);
                store.waitForNonStaleProjectionData(WAIT);
                await().atMost(WAIT).until(() -> db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events")
                        + " WHERE stream_id = 'echo-a'") == 2);
            }
            if (db.engine() == DatabaseEngine.POSTGRESQL) {
                assertThat(advances).as("the page that applied the ticks and raised their echoes")
                        .anyMatch(sql -> !sql.startsWith(ASYNC_COMMIT));
            }
        }
    }
}
