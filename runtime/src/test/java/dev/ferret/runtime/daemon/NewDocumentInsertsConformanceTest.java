package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
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
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.ApplyGate;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A snapshot shard is the only writer of its documents: what a page reads and finds missing it inserts rather than
 * upserts (on PostgreSQL through {@code COPY}), and the rest it upserts. Ids, tenant ids and documents with tabs,
 * line breaks and backslashes go through the copy whole. A row such an insert finds is either another runner's
 * committed page (the shard's row moved: handled as a moved progression) or a write from outside Ferret (the row
 * unmoved: the page fails with the engine's error, the shard pauses, and neither that row nor an event is lost).
 */
@Tag("conformance")
class NewDocumentInsertsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SHARD = "Count:All";

    public record Count(String id, long value) {
    }

    public record Noted(String text) {
    }

    public record Notes(String id, String text) {
    }

    /** Holds a page between its reads and its write. */
    private static final ApplyGate GATE = new ApplyGate();

    @AfterEach
    void reset() {
        GATE.reset();
    }

    private static long applied(Tick tick) {
        GATE.pass();
        return 1;
    }

    /** Every COPY run on {@code source}'s connections, in order. */
    private static List<String> copiesOn(FlakyDataSource source) {
        List<String> copies = new CopyOnWriteArrayList<>();
        source.observeStatements(sql -> {
            if (sql.startsWith("COPY")) {
                copies.add(sql);
            }
        });
        return copies;
    }

    private static StoreOptions options(TestDatabase db) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().register(Noted.class);
        options.daemon().batchSize(2).maxBatchGrowth(1);
        options.projections().add(Snapshot.of("Count", Count.class)
                .create(Tick.class, (id, e) -> new Count(id, applied(e)))
                .apply(Tick.class, (doc, e) -> new Count(doc.id(), doc.value() + applied(e))), Lifecycle.ASYNC);
        options.projections().add(Snapshot.of("Notes", Notes.class)
                .create(Noted.class, (id, e) -> new Notes(id, e.text()))
                .apply(Noted.class, (doc, e) -> new Notes(doc.id(), doc.text() + e.text())), Lifecycle.ASYNC);
        return options;
    }

    private static void appendTicks(DocumentStore store, List<String> streams, int ticks) {
        try (DocumentSession session = store.openSession()) {
            for (String stream : streams) {
                for (int i = 1; i <= ticks; i++) {
                    session.events().append(stream, new Tick(i));
                }
            }
            session.saveChanges();
        }
    }

    private static Map<String, Long> counts(DocumentStore store) {
        Map<String, Long> values = new HashMap<>();
        try (QuerySession query = store.querySession()) {
            query.query(Count.class).toList().forEach(count -> values.put(count.id(), count.value()));
        }
        return values;
    }

    /** A statement that writes the live Count table, by its kind; null for any other. */
    private static String countWriteKind(String sql) {
        if (!sql.contains("pc_doc_count ") && !sql.contains("pc_doc_count\"") && !sql.contains("pc_doc_count(")) {
            return null;
        }
        if (sql.contains("ON CONFLICT") || sql.startsWith("MERGE")) {
            return "upsert";
        }
        return sql.startsWith("INSERT INTO") || sql.startsWith("COPY") ? "insert" : null;
    }

    @Test
    void aSnapshotShardInsertsTheDocumentsItFoundMissingAndUpsertsTheOnesItFound() throws Exception {
        try (TestDatabase db = TestDatabase.create("newdocinserts")) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> kinds = new CopyOnWriteArrayList<>();
            List<String> copies = new CopyOnWriteArrayList<>();
            observed.observeStatements(sql -> {
                String kind = countWriteKind(sql);
                if (kind != null) {
                    kinds.add(kind);
                }
                if (sql.startsWith("COPY")) {
                    copies.add(sql);
                }
            });
            try (DocumentStore store = Ferret.createStore(options(db).dataSource(observed))) {
                appendTicks(store, List.of("a", "b", "c"), 3);
                store.waitForNonStaleProjectionData(WAIT);

                assertThat(counts(store)).containsOnly(Map.entry("a", 3L), Map.entry("b", 3L), Map.entry("c", 3L));
                // pages of two events: a1 a2 | a3 b1 | b2 b3 | c1 c2 | c3: "a", "b" and "c" are each new in one page
                assertThat(kinds).filteredOn("insert"::equals).hasSize(3);
                assertThat(kinds).filteredOn("upsert"::equals).hasSize(3);
                assertThat(db.queryLong("SELECT MAX(version) FROM " + db.table("pc_doc_count")))
                        .as("inserted at version 1, each later page's upsert adds one").isEqualTo(2);
                assertThat(copies).as("a few new documents are inserted with a statement, not copied").isEmpty();
            }
        }
    }

    @Test
    void aPageWithAThousandNewDocumentsOrMoreCopiesThemOnPostgresql() throws Exception {
        try (TestDatabase db = TestDatabase.create("newdoccopy")) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> copies = copiesOn(observed);
            StoreOptions options = options(db).dataSource(observed);
            options.daemon().batchSize(5_000);
            List<String> streams = DaemonFixtures.streams("m", 1_200);
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, streams, 1);
                store.waitForNonStaleProjectionData(WAIT);
                appendTicks(store, streams.subList(0, 10), 1);
                store.waitForNonStaleProjectionData(WAIT);

                Map<String, Long> counts = counts(store);
                assertThat(counts).hasSize(1_200);
                streams.forEach(stream -> assertThat(counts.get(stream)).as(stream)
                        .isEqualTo(streams.indexOf(stream) < 10 ? 2L : 1L));
                if (db.engine() == DatabaseEngine.POSTGRESQL) {
                    assertThat(copies).as("one page of 1,200 new documents, one copy").hasSize(1);
                } else {
                    assertThat(copies).isEmpty();
                }
            }
        }
    }

    @Test
    void idsTenantIdsAndDocumentsWithTabsLineBreaksAndBackslashesAreStoredWhole() throws Exception {
        List<String> ids = List.of("tab\there", "back\\slash", "null\\N", "dot\\.", "end\\");
        String tenant = "t\\N\tx";
        String text = "line\nbreak\r\ttab \\ backslash \\N \\. \"quoted\" é 🦦";
        // one page with enough new documents to be copied on PostgreSQL (DocumentRows.COPY_FROM)
        List<String> fillers = DaemonFixtures.streams("filler", 1_000);
        try (TestDatabase db = TestDatabase.create("newdocescapes")) {
            FlakyDataSource observed = new FlakyDataSource(db.dataSource());
            List<String> copies = copiesOn(observed);
            StoreOptions options = options(db).dataSource(observed);
            options.daemon().batchSize(5_000);
            try (DocumentStore store = Ferret.createStore(options)) {
                try (DocumentSession session = store.openSession(tenant)) {
                    for (String id : ids) {
                        session.events().append(id, new Noted(text));
                    }
                    for (String filler : fillers) {
                        session.events().append(filler, new Noted("x"));
                    }
                    session.saveChanges();
                }
                store.waitForNonStaleProjectionData(WAIT);

                try (QuerySession query = store.querySession(tenant)) {
                    List<Notes> notes = query.query(Notes.class).toList().stream()
                            .filter(note -> !note.id().startsWith("filler-")).toList();
                    assertThat(notes).extracting(Notes::id).containsExactlyInAnyOrderElementsOf(ids);
                    assertThat(notes).extracting(Notes::text).containsOnly(text);
                    for (String id : ids) {
                        assertThat(query.load(Notes.class, id)).as(id).contains(new Notes(id, text));
                    }
                }
                try (QuerySession other = store.querySession()) {
                    assertThat(other.query(Notes.class).toList()).as("nothing landed in another tenant").isEmpty();
                }
                assertThat(copies).as("copied on PostgreSQL").hasSize(db.engine() == DatabaseEngine.POSTGRESQL ? 1 : 0);
            }
        }
    }

    /**
     * Another runner of the shard (a node that lost the HotCold lock and has not noticed) commits the page while this
     * node's page is held between its read and its write: this node's insert finds the other's row, and the shard's
     * row moved. That is a moved progression (read the row again, go on from there), not a failure that pauses.
     */
    @Test
    void anInsertThatFindsAnotherRunnersCommittedPageGoesOnFromTheShardsRow() throws Exception {
        try (TestDatabase db = TestDatabase.create("newdocconflict")) {
            StoreOptions options = options(db);
            options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(100));
            GATE.close();
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, List.of("a", "b", "c"), 3);
                await().atMost(WAIT).until(() -> GATE.held() > 0);
                // what the other runner's first page (a1, a2) committed: "a" at 2 and the shard's row at 2
                insertCount(db, "a", 2);
                db.execute("INSERT INTO " + db.table("pc_event_progression")
                        + " (name, last_seq_id, last_updated) VALUES ('" + SHARD + "', 2, CURRENT_TIMESTAMP)");

                GATE.open();
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(counts(store)).containsOnly(Map.entry("a", 3L), Map.entry("b", 3L), Map.entry("c", 3L));
                assertThat(store.daemon().shard(SHARD).orElseThrow().state()).isEqualTo(ShardState.RUNNING);
            }
        }
    }

    /**
     * A row written from outside Ferret between the page's read and its write, with the shard's row unmoved: the
     * insert fails with the engine's error and the shard pauses. That row is not overwritten and no event is lost:
     * once it is removed, a restart of the shard projects every event.
     */
    @Test
    void aRowWrittenBehindTheShardsBackPausesItWithTheEnginesErrorAndLosesNothing() throws Exception {
        try (TestDatabase db = TestDatabase.create("newdocforeign")) {
            GATE.close();
            try (DocumentStore store = Ferret.createStore(options(db))) {
                appendTicks(store, List.of("a"), 2);
                await().atMost(WAIT).until(() -> GATE.held() > 0);
                insertCount(db, "a", 7);

                GATE.open();
                await().atMost(WAIT).until(() -> store.daemon().shard(SHARD).orElseThrow().state()
                        == ShardState.PAUSED);
                ShardStatus paused = store.daemon().shard(SHARD).orElseThrow();
                assertThat(paused.error()).isInstanceOf(SQLException.class)
                        .isNotInstanceOf(ProgressionConflictException.class);
                assertThat(counts(store)).as("the row written from outside is not overwritten")
                        .containsOnly(Map.entry("a", 7L));

                db.execute("DELETE FROM " + db.table("pc_doc_count"));
                store.daemon().restart(SHARD);
                store.waitForNonStaleProjectionData(WAIT);
                assertThat(counts(store)).containsOnly(Map.entry("a", 2L));
            }
        }
    }

    /** Writes a Count straight into the live table, as another writer would. */
    private static void insertCount(TestDatabase db, String id, long value) throws SQLException {
        Dialect dialect = Dialects.of(db.engine());
        try (Connection c = db.dataSource().getConnection();
             PreparedStatement insert = c.prepareStatement(dialect.documentSql(
                     new TableNames(db.schema(), "pc_"), "count").insert())) {
            insert.setString(1, id);
            insert.setString(2, StoreOptions.DEFAULT_TENANT);
            insert.setString(3, "{\"id\":\"" + id + "\",\"value\":" + value + "}");
            insert.setObject(4, OffsetDateTime.now());
            insert.executeUpdate();
        }
    }
}
