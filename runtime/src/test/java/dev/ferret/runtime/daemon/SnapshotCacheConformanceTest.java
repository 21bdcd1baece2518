package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A snapshot shard keeps what it committed between its pages ({@code documentCacheSize}) and reads none of it back,
 * as long as its pages commit one after the other; a page that fails makes it read everything back, and every event
 * still counts once. Reads of the snapshot table are counted on the data source the store uses.
 */
@Tag("conformance")
class SnapshotCacheConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SHARD = "Tally:All";

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        DaemonFixtures.poisonous = true;
        resources.close();
    }

    @Test
    void aSnapshotShardReadsBackNoneOfTheSnapshotsItCommittedWhilePagesCommitInTurn() {
        TestDatabase db = resources.database("snapcache");
        SnapshotReads reads = new SnapshotReads(db.dataSource());
        DocumentStore store = resources.add(Ferret.createStore(withTally(fastDaemon(db)).dataSource(reads.dataSource)));
        assertThat(readsOverLaterPages(store, reads, 2)).as("reads of the snapshot table by the shard").isZero();
        assertThat(tally(store, "a").count()).isEqualTo(90);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"no documents per shard", "no bytes for the store"})
    void withTheCacheOffEveryPageReadsItsSnapshotsBack(String off) {
        TestDatabase db = resources.database("snapnocache");
        SnapshotReads reads = new SnapshotReads(db.dataSource());
        StoreOptions options = withTally(fastDaemon(db)).dataSource(reads.dataSource);
        if (off.contains("bytes")) {
            options.daemon().documentCacheMegabytes(0);
        } else {
            options.daemon().documentCacheSize(0);
        }
        DocumentStore store = resources.add(Ferret.createStore(options));
        assertThat(readsOverLaterPages(store, reads, 1)).as("reads of the snapshot table by the shard").isPositive();
        assertThat(tally(store, "a").count()).isEqualTo(60);
    }

    @Test
    void aSnapshotTypeAnotherProjectionAlsoWritesIsReadBackOnEveryPage() {
        TestDatabase db = resources.database("snapshared");
        SnapshotReads reads = new SnapshotReads(db.dataSource());
        StoreOptions options = withTally(fastDaemon(db)).dataSource(reads.dataSource);
        // declares Tally as a document type it writes (it never does here): the snapshot has two writers
        options.projections().add(new EventProjection("AlsoTally", Tally.class) {
            @Override
            public void apply(EventEnvelope event, DocumentOperations operations) {
            }
        }, Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        assertThat(readsOverLaterPages(store, reads, 1)).as("reads of the snapshot table by the shard").isPositive();
        assertThat(tally(store, "a").count()).isEqualTo(60);
    }

    @Test
    void afterAPageFailsTheShardReadsItsSnapshotsBackAndCountsEveryEventOnce() {
        TestDatabase db = resources.database("snapfail");
        SnapshotReads reads = new SnapshotReads(db.dataSource());
        DocumentStore store = resources.add(Ferret.createStore(withTally(fastDaemon(db)).dataSource(reads.dataSource)));
        appendTicks(store, "a", 30);
        store.waitForNonStaleProjectionData(WAIT);
        // ticks, then a poison in the same stream: the page that holds it fails and rolls back its ticks too
        try (DocumentSession session = store.openSession()) {
            for (int i = 0; i < 10; i++) {
                session.events().append("a", new DaemonFixtures.Tick(100 + i));
            }
            session.events().append("a", new Poison("bad data"));
            session.events().append("a", new DaemonFixtures.Tick(200));
            session.saveChanges();
        }
        await().atMost(WAIT).until(() -> state(store) == ShardState.PAUSED);

        int before = reads.count.get();
        DaemonFixtures.poisonous = false;
        store.daemon().restart(SHARD);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(reads.count.get() - before).as("reads of the snapshot table after the failed page").isPositive();
        assertThat(tally(store, "a").count()).as("30 + 10 ticks, the poison, then 1 tick").isEqualTo(41);
        assertThat(tally(store, "a").lastTick()).isEqualTo(200);
    }

    /** Appends 30 ticks and waits; then counts the snapshot reads over {@code saves} more saves of 30 ticks. */
    private static int readsOverLaterPages(DocumentStore store, SnapshotReads reads, int saves) {
        appendTicks(store, "a", 30);
        store.waitForNonStaleProjectionData(WAIT);
        int before = reads.count.get();
        for (int i = 0; i < saves; i++) {
            appendTicks(store, "a", 30);
        }
        store.waitForNonStaleProjectionData(WAIT);
        return reads.count.get() - before;
    }

    private static ShardState state(DocumentStore store) {
        return store.daemon().status().shards().stream().filter(s -> s.name().equals(SHARD)).findFirst()
                .orElseThrow().state();
    }

    private static Tally tally(DocumentStore store, String id) {
        try (QuerySession session = store.querySession()) {
            return session.load(Tally.class, id).orElseThrow();
        }
    }

    /** Counts the statements prepared to read the snapshot table, on every connection the store takes. */
    private static final class SnapshotReads {

        final AtomicInteger count = new AtomicInteger();
        final FlakyDataSource dataSource;

        SnapshotReads(DataSource delegate) {
            dataSource = new FlakyDataSource(delegate);
            dataSource.observeStatements(sql -> {
                if (sql.startsWith("SELECT") && sql.contains("pc_doc_tally")) {
                    count.incrementAndGet();
                }
            });
        }
    }
}
