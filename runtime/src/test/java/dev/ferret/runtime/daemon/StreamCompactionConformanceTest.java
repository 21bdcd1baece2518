package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.StreamCompacted;
import dev.ferret.StreamForWriting;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Compacting replaces a stream's events up to a version with the snapshot of their fold, at that version: live
 * aggregation, fetch-for-writing and a rebuild give the documents they gave before, from less.
 */
@Tag("conformance")
class StreamCompactionConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Ticks applied by any {@link Sum} shard since the last reset: what a rebuild read. */
    private static final AtomicInteger TICKS_APPLIED = new AtomicInteger();

    public record Sum(String id, long ticks, long total) {
    }

    private static StoreOptions options(TestDatabase db, boolean partitioned) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().partitionByTenant(partitioned);
        options.projections().add(Snapshot.of("Sum", Sum.class)
                .create(Tick.class, (id, e) -> {
                    TICKS_APPLIED.incrementAndGet();
                    return new Sum(id, 1, e.n());
                })
                .apply(Tick.class, (doc, e) -> {
                    TICKS_APPLIED.incrementAndGet();
                    return new Sum(doc.id(), doc.ticks() + 1, doc.total() + e.n());
                }), Lifecycle.ASYNC);
        return options;
    }

    private static DocumentSession session(DocumentStore store, boolean partitioned) {
        return partitioned ? store.openSession("acme") : store.openSession();
    }

    private static QuerySession query(DocumentStore store, boolean partitioned) {
        return partitioned ? store.querySession("acme") : store.querySession();
    }

    private static void append(DocumentStore store, boolean partitioned, String stream, int from, int to) {
        try (DocumentSession session = session(store, partitioned)) {
            for (int i = from; i <= to; i++) {
                session.events().append(stream, new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static void compact(DocumentStore store, boolean partitioned, String stream, long through, boolean keep) {
        try (DocumentSession session = session(store, partitioned)) {
            session.events().compactStream(Sum.class, stream, through, keep);
            session.saveChanges();
        }
    }

    private static void rebuild(DocumentStore store, boolean partitioned) {
        if (partitioned) {
            store.daemon().rebuild("Sum", "acme", WAIT, p -> { });
        } else {
            store.daemon().rebuild("Sum", WAIT);
        }
    }

    private static long rows(TestDatabase db, String table, String stream) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table(table) + " WHERE stream_id = '" + stream + "'");
    }

    private static Sum sum(DocumentStore store, boolean partitioned, String stream) {
        try (QuerySession query = query(store, partitioned)) {
            return query.load(Sum.class, stream).orElseThrow();
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aCompactedStreamAggregatesAndRebuildsToTheSameDocumentFromItsSnapshot(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("compact" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            append(store, partitioned, "c", 1, 10);
            append(store, partitioned, "d", 1, 3);
            store.waitForNonStaleProjectionData(WAIT);
            Sum before = sum(store, partitioned, "c");
            assertThat(before).isEqualTo(new Sum("c", 10, 55));

            compact(store, partitioned, "c", 8, true);
            try (QuerySession query = query(store, partitioned)) {
                List<EventEnvelope> live = query.fetchStream("c");
                assertThat(live).extracting(EventEnvelope::version).containsExactly(8L, 9L, 10L);
                assertThat(live.get(0).data()).isInstanceOfSatisfying(StreamCompacted.class,
                        compacted -> assertThat(compacted.projection()).isEqualTo("Sum"));
                assertThat(query.aggregateStream(Sum.class, "c")).contains(before);
                assertThat(query.aggregateStream(Sum.class, "c", 9L)).contains(new Sum("c", 9, 45));
                assertThat(query.fetchStreamState("c")).get().extracting(s -> s.version()).isEqualTo(10L);
                assertThat(query.fetchStream("c", true)).as("the originals in the archive, and the snapshot")
                        .hasSize(11);
            }
            assertThat(rows(db, "pc_events_archive", "c")).isEqualTo(8);
            try (DocumentSession session = session(store, partitioned)) {
                StreamForWriting<Sum> forWriting = session.fetchForWriting(Sum.class, "c");
                assertThat(forWriting.version()).isEqualTo(10L);
                assertThat(forWriting.aggregate()).contains(before);
            }

            TICKS_APPLIED.set(0);
            rebuild(store, partitioned);
            assertThat(TICKS_APPLIED.get()).as("c's two ticks after the snapshot, and d's three").isEqualTo(5);
            assertThat(sum(store, partitioned, "c")).isEqualTo(before);
            assertThat(sum(store, partitioned, "d")).isEqualTo(new Sum("d", 3, 6));

            // the daemon goes on from the snapshot's document; compacting again archives only the new originals
            append(store, partitioned, "c", 11, 11);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(sum(store, partitioned, "c")).isEqualTo(new Sum("c", 11, 66));
            compact(store, partitioned, "c", 11, true);
            assertThat(rows(db, "pc_events_archive", "c")).isEqualTo(11);
            assertThat(rows(db, "pc_events", "c")).isEqualTo(1);
            compact(store, partitioned, "c", 11, true);
            assertThat(rows(db, "pc_events", "c")).as("compacting through the same version again changes nothing")
                    .isEqualTo(1);

            // the replaced events deleted instead
            compact(store, partitioned, "d", 3, false);
            assertThat(rows(db, "pc_events_archive", "d")).isZero();
            TICKS_APPLIED.set(0);
            rebuild(store, partitioned);
            assertThat(TICKS_APPLIED.get()).isZero();
            assertThat(sum(store, partitioned, "c")).isEqualTo(new Sum("c", 11, 66));
            assertThat(sum(store, partitioned, "d")).isEqualTo(new Sum("d", 3, 6));
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aCompactionThatCannotBeDoneFailsTheSaveAndWritesNothing(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("compactbad" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            append(store, partitioned, "c", 1, 5);
            compact(store, partitioned, "c", 4, true);
            try (DocumentSession session = session(store, partitioned)) {
                session.events().append("e", new Tick(1));
                session.events().compactStream(Sum.class, "c", 3);
                assertThatThrownBy(session::saveChanges).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("stream 'c'").hasMessageContaining("through version 3");
            }
            try (DocumentSession session = session(store, partitioned)) {
                session.events().compactStream(Sum.class, "c", 9);
                assertThatThrownBy(session::saveChanges).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("no live event at that version");
            }
            try (DocumentSession session = session(store, partitioned)) {
                session.events().compactStream(Sum.class, "nowhere", 1);
                assertThatThrownBy(session::saveChanges).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("stream 'nowhere'").hasMessageContaining("does not exist");
                assertThatThrownBy(() -> session.events().compactStream(Sum.class, "c", 0))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("versions start at 1");
                assertThatThrownBy(() -> session.events().compactStream(String.class, "c", 2))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.lang.String");
            }
            try (QuerySession query = query(store, partitioned)) {
                assertThat(query.fetchStream("e")).as("the failed save wrote nothing").isEmpty();
                assertThat(query.fetchStream("c")).extracting(EventEnvelope::version).containsExactly(4L, 5L);
            }
        }
    }
}
