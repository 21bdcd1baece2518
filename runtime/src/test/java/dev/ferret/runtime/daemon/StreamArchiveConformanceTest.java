package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.SchemaException;
import dev.ferret.StoreOptions;
import dev.ferret.StreamArchived;
import dev.ferret.StreamState;
import dev.ferret.StreamUnarchived;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Archiving moves a stream's events out of the live log, with their numbers, and back: fetching leaves them out
 * unless asked, the daemon sees the marker event, and a rebuild reads only what is live.
 */
@Tag("conformance")
class StreamArchiveConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Ticks applied by any {@link Count} shard since the last reset: what a rebuild read. */
    private static final AtomicInteger TICKS_APPLIED = new AtomicInteger();

    public record Count(String id, long ticks) {
    }

    private static StoreOptions options(TestDatabase db, boolean partitioned) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().partitionByTenant(partitioned);
        options.projections().add(Snapshot.of("Count", Count.class)
                .create(Tick.class, (id, e) -> {
                    TICKS_APPLIED.incrementAndGet();
                    return new Count(id, 1);
                })
                .apply(Tick.class, (doc, e) -> {
                    TICKS_APPLIED.incrementAndGet();
                    return new Count(doc.id(), doc.ticks() + 1);
                })
                .deleteOn(StreamArchived.class), Lifecycle.ASYNC);
        return options;
    }

    private static DocumentSession session(DocumentStore store, boolean partitioned) {
        return partitioned ? store.openSession("acme") : store.openSession();
    }

    private static QuerySession query(DocumentStore store, boolean partitioned) {
        return partitioned ? store.querySession("acme") : store.querySession();
    }

    private static void append(DocumentStore store, boolean partitioned, String stream, int ticks) {
        try (DocumentSession session = session(store, partitioned)) {
            for (int i = 1; i <= ticks; i++) {
                session.events().append(stream, new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static void move(DocumentStore store, boolean partitioned, boolean archive, String... streams) {
        try (DocumentSession session = session(store, partitioned)) {
            for (String stream : streams) {
                if (archive) {
                    session.events().archiveStream(stream);
                } else {
                    session.events().unarchiveStream(stream);
                }
            }
            session.saveChanges();
        }
    }

    private static long rows(TestDatabase db, String table, String stream) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table(table) + " WHERE stream_id = '" + stream + "'");
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void archivingMovesAStreamsEventsOutOfTheLiveLogWithTheirNumbersAndBack(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("archivemove" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            append(store, partitioned, "a", 3);
            append(store, partitioned, "b", 2);
            List<EventEnvelope> before;
            try (QuerySession query = query(store, partitioned)) {
                before = query.fetchStream("a");
            }

            move(store, partitioned, true, "a");
            try (QuerySession query = query(store, partitioned)) {
                List<EventEnvelope> live = query.fetchStream("a");
                assertThat(live).extracting(EventEnvelope::version).containsExactly(4L);
                assertThat(live.get(0).data()).isEqualTo(new StreamArchived("a"));
                List<EventEnvelope> all = query.fetchStream("a", true);
                assertThat(all).extracting(EventEnvelope::version).containsExactly(1L, 2L, 3L, 4L);
                assertThat(all.subList(0, 3)).extracting(EventEnvelope::sequence)
                        .as("archived events keep their numbers")
                        .containsExactlyElementsOf(before.stream().map(EventEnvelope::sequence).toList());
                assertThat(query.fetchStreamState("a")).get().extracting(StreamState::version, StreamState::archived)
                        .containsExactly(4L, true);
                assertThat(query.fetchStream("b")).hasSize(2);
                assertThat(query.fetchStreamState("b")).get().extracting(StreamState::archived).isEqualTo(false);
            }
            assertThat(rows(db, "pc_events", "a")).isEqualTo(1);
            assertThat(rows(db, "pc_events_archive", "a")).isEqualTo(3);

            // appended after archiving: live, and archiving again moves them too
            append(store, partitioned, "a", 1);
            move(store, partitioned, true, "a");
            assertThat(rows(db, "pc_events_archive", "a")).isEqualTo(5);

            // back: every event but the two archiving markers, which change places with them
            move(store, partitioned, false, "a");
            try (QuerySession query = query(store, partitioned)) {
                List<EventEnvelope> live = query.fetchStream("a");
                assertThat(live).extracting(EventEnvelope::version).containsExactly(1L, 2L, 3L, 5L, 7L);
                assertThat(live.get(4).data()).isEqualTo(new StreamUnarchived("a"));
                assertThat(query.fetchStream("a", true)).extracting(EventEnvelope::version)
                        .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
                assertThat(query.fetchStreamState("a")).get().extracting(StreamState::archived).isEqualTo(false);
            }
            assertThat(rows(db, "pc_events_archive", "a")).isEqualTo(2);
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void archivingAStreamThatDoesNotExistFailsTheSaveAndWritesNothing(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("archivemissing" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            append(store, partitioned, "kept", 2);
            try (DocumentSession session = session(store, partitioned)) {
                session.events().archiveStream("kept");
                session.events().append("c", new Tick(1));
                session.events().archiveStream("nowhere");
                assertThatThrownBy(session::saveChanges).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("stream 'nowhere'").hasMessageContaining("does not exist");
            }
            try (QuerySession query = query(store, partitioned)) {
                assertThat(query.fetchStream("kept")).as("the archiving before it rolled back").hasSize(2);
                assertThat(query.fetchStream("c")).isEmpty();
            }
            assertThat(rows(db, "pc_events_archive", "kept")).isZero();
            assertThatThrownBy(() -> session(store, partitioned).events().archiveStream(" "))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void theDaemonSeesTheMarkerAndARebuildReadsOnlyTheLiveEvents(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("archiverebuild" + partitioned);
             DocumentStore store = Ferret.createStore(options(db, partitioned))) {
            for (int s = 0; s < 10; s++) {
                append(store, partitioned, "s" + s, 5);
            }
            store.waitForNonStaleProjectionData(WAIT);
            move(store, partitioned, true, "s0", "s1", "s2", "s3", "s4");
            store.waitForNonStaleProjectionData(WAIT);
            try (QuerySession query = query(store, partitioned)) {
                assertThat(query.load(Count.class, "s0")).as("deleted on StreamArchived").isEmpty();
                assertThat(query.load(Count.class, "s5")).get().extracting(Count::ticks).isEqualTo(5L);
            }

            TICKS_APPLIED.set(0);
            String tenant = partitioned ? "acme" : null;
            if (partitioned) {
                store.daemon().rebuild("Count", tenant, WAIT, p -> { });
            } else {
                store.daemon().rebuild("Count", WAIT);
            }
            assertThat(TICKS_APPLIED.get()).as("only the live streams' ticks were read").isEqualTo(25);
            try (QuerySession query = query(store, partitioned)) {
                for (int s = 0; s < 10; s++) {
                    assertThat(query.load(Count.class, "s" + s)).as("s%d", s).map(Count::ticks)
                            .isEqualTo(s < 5 ? Optional.empty() : Optional.of(5L));
                }
            }

            // brought back: the shards are past its events, a rebuild reads them again
            move(store, partitioned, false, "s0");
            store.waitForNonStaleProjectionData(WAIT);
            TICKS_APPLIED.set(0);
            if (partitioned) {
                store.daemon().rebuild("Count", tenant, WAIT, p -> { });
            } else {
                store.daemon().rebuild("Count", WAIT);
            }
            assertThat(TICKS_APPLIED.get()).isEqualTo(30);
            try (QuerySession query = query(store, partitioned)) {
                assertThat(query.load(Count.class, "s0")).as("rebuilt as if never archived").get()
                        .extracting(Count::ticks).isEqualTo(5L);
            }
        }
    }

    @Test
    void aSchemaFromBeforeArchivingIsRefusedWhenVerifiedAndUpgradedWhenApplied() {
        boolean partitioned = false;
        try (TestDatabase db = TestDatabase.create("archiveupgrade")) {
            try (DocumentStore store = Ferret.createStore(options(db, partitioned))) {
                append(store, partitioned, "old", 2);
            }
            // the schema as the version before archiving left it
            String streams = db.table("pc_streams");
            if (db.engine() == DatabaseEngine.SQL_SERVER) {
                db.execute("ALTER TABLE " + streams + " DROP CONSTRAINT df_pc_streams_archived");
            }
            db.execute("ALTER TABLE " + streams + " DROP COLUMN archived");
            db.execute("DROP TABLE " + db.table("pc_events_archive"));

            StoreOptions verifying = options(db, partitioned).applyAllDatabaseChangesOnStartup(false);
            assertThatThrownBy(() -> Ferret.createStore(verifying)).isInstanceOf(SchemaException.class)
                    .hasMessageContaining("pc_streams.archived").hasMessageContaining("pc_events_archive");

            try (DocumentStore store = Ferret.createStore(options(db, partitioned))) {
                try (QuerySession query = query(store, partitioned)) {
                    assertThat(query.fetchStreamState("old")).get().extracting(StreamState::archived)
                            .isEqualTo(false);
                }
                move(store, partitioned, true, "old");
                try (QuerySession query = query(store, partitioned)) {
                    assertThat(query.fetchStream("old", true)).hasSize(3);
                    assertThat(query.fetchStreamState("old")).get().extracting(StreamState::archived)
                            .isEqualTo(true);
                }
            }
        }
    }

    /** The event that closes a stream: the projection archives it. */
    public record Closed(String reason) {
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aProjectionArchivesTheStreamItsEventClosesWithItsPage(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("archivefx" + partitioned)) {
            StoreOptions options = DaemonFixtures.fastDaemon(db);
            options.events().partitionByTenant(partitioned).register(Closed.class);
            options.projections().add(Snapshot.of("Closing", Count.class)
                    .create(Tick.class, (id, e) -> new Count(id, 1))
                    .apply(Tick.class, (doc, e) -> new Count(doc.id(), doc.ticks() + 1))
                    .apply(Closed.class, (doc, e) -> doc)
                    .deleteOn(StreamArchived.class)
                    .raiseSideEffects((doc, event, fx) -> {
                        if (event.data() instanceof Closed) {
                            fx.archiveStream(event.streamId());
                        }
                    }), Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                append(store, partitioned, "open", 2);
                append(store, partitioned, "shut", 3);
                try (DocumentSession session = session(store, partitioned)) {
                    session.events().append("shut", new Closed("done"));
                    session.saveChanges();
                }
                // the page that applied Closed archived the stream; the StreamArchived it appended deletes the document
                await().atMost(WAIT).untilAsserted(() -> {
                    store.waitForNonStaleProjectionData(WAIT);
                    try (QuerySession query = query(store, partitioned)) {
                        assertThat(query.fetchStream("shut")).extracting(EventEnvelope::version).containsExactly(5L);
                        assertThat(query.load(Count.class, "shut")).isEmpty();
                        assertThat(query.fetchStreamState("shut")).get().extracting(StreamState::archived)
                                .isEqualTo(true);
                        assertThat(query.load(Count.class, "open")).get().extracting(Count::ticks).isEqualTo(2L);
                    }
                });
                assertThat(rows(db, "pc_events_archive", "shut")).isEqualTo(4);
                // a rebuild writes no side effects: nothing is archived again
                if (partitioned) {
                    store.daemon().rebuild("Closing", "acme", WAIT, p -> { });
                } else {
                    store.daemon().rebuild("Closing", WAIT);
                }
                assertThat(rows(db, "pc_events_archive", "shut")).isEqualTo(4);
                try (QuerySession query = query(store, partitioned)) {
                    assertThat(query.fetchStream("shut")).hasSize(1);
                }
            }
        }
    }

    @Test
    void theMarkersKeepTheirAliasesWhenTheApplicationRegistersTheirClassesToo() {
        try (TestDatabase db = TestDatabase.create("archivealias")) {
            StoreOptions options = options(db, false);
            // as a container does for the event types its projections handle: under the simple class name
            options.events().register(StreamArchived.class).register(StreamUnarchived.class);
            try (DocumentStore store = Ferret.createStore(options)) {
                append(store, false, "a", 2);
                move(store, false, true, "a");
                move(store, false, false, "a");
                try (QuerySession query = query(store, false)) {
                    assertThat(query.fetchStream("a")).extracting(EventEnvelope::version)
                            .as("the StreamArchived marker went to the archive on the way back")
                            .containsExactly(1L, 2L, 4L);
                }
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events")
                        + " WHERE type = 'stream_archived' OR type = 'stream_unarchived'")).isEqualTo(1);
                assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events_archive")
                        + " WHERE type = 'stream_archived'")).isEqualTo(1);
            }
        }
    }
}
