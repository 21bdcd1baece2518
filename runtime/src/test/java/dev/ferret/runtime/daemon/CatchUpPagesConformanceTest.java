package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A shard far behind its mark reads bigger pages ({@code maxBatchGrowth}): each full page doubles the next up to the
 * cap, and the first page after it caught up has the configured size again. Every event is counted once throughout.
 * Each event here starts a snapshot of its own stream, so a page's change set holds one document per event.
 */
@Tag("conformance")
class CatchUpPagesConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    @Test
    void pagesGrowWhileFarBehindAndGoBackToTheBatchSizeOnceCaughtUp() {
        TestDatabase db = resources.database("catchuppages");
        StoreOptions writerOptions = withTally(fastDaemon(db));
        writerOptions.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore writer = Ferret.createStore(writerOptions)) {
            appendOnePerStream(writer, "old", 1_000);
        }

        List<Integer> pages = Collections.synchronizedList(new ArrayList<>());
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().batchSize(10).maxBatchGrowth(8);
        options.projections().asyncListeners().add(new AsyncListener() {
            @Override
            public void afterCommit(QuerySession session, ChangeSet changes) {
                pages.add(changes.inserted().size() + changes.updated().size());
            }
        });
        DocumentStore store = resources.add(Ferret.createStore(options));
        store.waitForNonStaleProjectionData(WAIT);

        List<Integer> catchUp = List.copyOf(pages);
        assertThat(catchUp).as("pages of the catch-up").startsWith(10, 20, 40, 80, 80).allMatch(size -> size <= 80);
        assertThat(catchUp.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1_000);

        appendOnePerStream(store, "new", 25);
        store.waitForNonStaleProjectionData(WAIT);
        List<Integer> after = List.copyOf(pages.subList(catchUp.size(), pages.size()));
        assertThat(after).as("pages once caught up").isNotEmpty();
        assertThat(after.get(0)).as("the first page after catching up").isLessThanOrEqualTo(10);
        assertThat(after.stream().mapToInt(Integer::intValue).sum()).isEqualTo(25);
        try (QuerySession session = store.querySession()) {
            assertThat(session.load(Tally.class, "old-999")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(1));
            assertThat(session.load(Tally.class, "new-24")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(1));
        }
    }

    @Test
    void aPageThatFailsSendsTheRetryAndThePagesAfterItBackToTheBatchSize() {
        TestDatabase db = resources.database("catchupfail");
        StoreOptions writerOptions = withTally(fastDaemon(db));
        writerOptions.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore writer = Ferret.createStore(writerOptions)) {
            appendOnePerStream(writer, "old", 1_000);
        }

        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        AtomicInteger refusals = new AtomicInteger();
        List<Integer> pages = Collections.synchronizedList(new ArrayList<>());
        StoreOptions options = withTally(fastDaemon(db)).dataSource(flaky);
        options.daemon().batchSize(10).maxBatchGrowth(8);
        options.projections().asyncListeners().add(new AsyncListener() {
            @Override
            public void afterCommit(QuerySession session, ChangeSet changes) {
                pages.add(changes.inserted().size() + changes.updated().size());
                if (pages.size() == 4) {
                    // the page after the fourth cannot reach the database
                    flaky.refuseTo(thread -> FlakyDataSource.shardWorkers().test(thread)
                            && refusals.incrementAndGet() > 0);
                }
            }
        });
        DocumentStore store = resources.add(Ferret.createStore(options));
        await().atMost(WAIT).until(() -> refusals.get() > 0);
        flaky.refuseTo(thread -> false);
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(pages).as("pages grew, a page failed, and they grew again from the batch size")
                .startsWith(10, 20, 40, 80, 10, 20, 40, 80);
        assertThat(pages.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1_000);
        try (QuerySession session = store.querySession()) {
            assertThat(session.load(Tally.class, "old-999")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(1));
        }
    }

    private static void appendOnePerStream(DocumentStore store, String prefix, int streams) {
        try (DocumentSession session = store.openSession()) {
            for (int i = 0; i < streams; i++) {
                session.events().append(prefix + "-" + i, new Tick(i));
            }
            session.saveChanges();
        }
    }
}
