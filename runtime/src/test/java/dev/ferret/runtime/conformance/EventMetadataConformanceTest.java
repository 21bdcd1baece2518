package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.QuerySession;
import dev.ferret.SchemaException;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.SideEffects;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.QueryPlans;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Correlation id, causation id and headers are stored with each event, set per session, per append or by the
 * store's metadata source, read back everywhere an event is read, looked up by correlation id through an index,
 * added to a table an earlier version created, and refused with a message when they do not fit.
 */
@Tag("conformance")
class EventMetadataConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** What the async projection saw of an event's metadata. */
    public record Seen(String id, String correlationId, String causationId, Map<String, String> headers) {
    }

    /** Records the metadata of every OrderPlaced, and raises an OrderShipped for it on stream "shipped-<id>". */
    static final class Recorder extends EventProjection {

        Recorder() {
            super("Recorder", Seen.class);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            operations.store(new Seen(event.streamId() + "@" + event.version(), event.correlationId(),
                    event.causationId(), event.headers()));
        }

        @Override
        public void raiseSideEffects(EventEnvelope event, SideEffects effects) {
            if (event.data() instanceof OrderPlaced placed) {
                effects.appendEvent("shipped-" + placed.orderId(), new OrderShipped(placed.orderId(), "dhl"));
            }
        }
    }

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    private DocumentStore storeWithoutDaemon(TestDatabase db) {
        StoreOptions options = options(db);
        options.daemon().mode(DaemonMode.DISABLED);
        return resources.add(Ferret.createStore(options));
    }

    private static StoreOptions options(TestDatabase db) {
        StoreOptions options = db.options();
        options.events().register(OrderPlaced.class).register(OrderShipped.class);
        options.daemon().mode(DaemonMode.SOLO).pollingInterval(Duration.ofMillis(50));
        return options;
    }

    @Test
    void sessionAppendAndSourceMetadataAreStoredAndReadBackOnEveryPath() {
        TestDatabase db = resources.database("metadata");
        AtomicReference<EventMetadata> fromRequest = new AtomicReference<>(
                EventMetadata.NONE.withCorrelationId("req-1").withHeader("user", "alice"));
        StoreOptions options = options(db);
        options.events().metadataSource(fromRequest::get);
        options.projections().add(new Recorder(), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));

        try (DocumentSession session = store.openSession()) {
            // the source's metadata, read as the session opened
            session.events().append("o-1", new OrderPlaced("o-1", "alice", 10));
            // the session's own, over the source's: the user header stays
            session.metadata(EventMetadata.NONE.withCausationId("cmd-7").withHeader("tier", "gold"));
            session.events().append("o-2", new OrderPlaced("o-2", "bob", 20));
            // one append's own, over the session's
            session.events().withMetadata(EventMetadata.NONE.withCorrelationId("req-2").withHeader("tier", "silver"))
                    .append("o-3", new OrderPlaced("o-3", "carol", 30));
            fromRequest.set(EventMetadata.NONE);
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            assertThat(session.metadata()).as("a session opened when the source has nothing").isEqualTo(EventMetadata.NONE);
            session.events().append("o-4", new OrderPlaced("o-4", "dave", 40));
            session.saveChanges();
        }

        EventMetadata first = new EventMetadata("req-1", null, Map.of("user", "alice"));
        EventMetadata second = new EventMetadata("req-1", "cmd-7", Map.of("user", "alice", "tier", "gold"));
        EventMetadata third = new EventMetadata("req-2", "cmd-7", Map.of("user", "alice", "tier", "silver"));
        try (QuerySession session = store.querySession()) {
            assertThat(session.fetchStream("o-1").get(0).metadata()).isEqualTo(first);
            assertThat(session.fetchStream("o-2").get(0).metadata()).isEqualTo(second);
            assertThat(session.fetchStream("o-3").get(0).metadata()).isEqualTo(third);
            assertThat(session.fetchStream("o-4").get(0).metadata()).isEqualTo(EventMetadata.NONE);
        }

        store.waitForNonStaleProjectionData(WAIT);
        try (QuerySession session = store.querySession()) {
            // the daemon read the same metadata
            assertThat(session.load(Seen.class, "o-2@1")).hasValue(new Seen("o-2@1", "req-1", "cmd-7",
                    Map.of("user", "alice", "tier", "gold")));
            assertThat(session.load(Seen.class, "o-4@1")).hasValue(new Seen("o-4@1", null, null, Map.of()));
            // an event a projection raised names the event that raised it, in the same conversation
            EventEnvelope raised = session.fetchStream("shipped-o-3").get(0);
            EventEnvelope cause = session.fetchStream("o-3").get(0);
            assertThat(raised.causationId()).isEqualTo(cause.eventId().toString());
            assertThat(raised.correlationId()).isEqualTo("req-2");
            assertThat(raised.headers()).isEqualTo(third.headers());
        }
    }

    /** Records the metadata of every event it is handed. */
    public static final class MetadataSubscription extends SubscriptionBase {

        final List<EventMetadata> seen = new CopyOnWriteArrayList<>();

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            page.events().forEach(event -> seen.add(event.metadata()));
            return PostCommitListener.NONE;
        }
    }

    @Test
    void aSubscriptionIsHandedEachEventsMetadata() {
        TestDatabase db = resources.database("metadatasub");
        MetadataSubscription subscription = new MetadataSubscription();
        StoreOptions options = options(db);
        options.projections().subscribe(subscription, s -> s.name("metadata"));
        DocumentStore store = resources.add(Ferret.createStore(options));
        try (DocumentSession session = store.openSession()) {
            session.metadata(EventMetadata.NONE.withCorrelationId("sub-1").withHeader("h", "v"));
            session.events().append("s", new OrderPlaced("s", "x", 1));
            session.saveChanges();
        }
        store.waitForNonStaleProjectionData(WAIT);
        await().atMost(WAIT).until(() -> !subscription.seen.isEmpty());
        assertThat(subscription.seen).containsExactly(new EventMetadata("sub-1", null, Map.of("h", "v")));
    }

    @Test
    void eventsAreFoundByCorrelationIdInSequenceOrderWithinTheirTenant() {
        TestDatabase db = resources.database("correlated");
        DocumentStore store = storeWithoutDaemon(db);
        for (String tenant : List.of("acme", "globex")) {
            try (DocumentSession session = store.openSession(tenant)) {
                session.metadata(EventMetadata.NONE.withCorrelationId("flow-1"));
                session.events().append("a", new OrderPlaced("a", tenant, 1));
                session.events().withMetadata(EventMetadata.NONE.withCorrelationId("flow-2"))
                        .append("b", new OrderPlaced("b", tenant, 2));
                session.events().append("c", new OrderPlaced("c", tenant, 3), new OrderShipped("c", "ups"));
                session.saveChanges();
            }
        }
        try (QuerySession session = store.querySession("acme")) {
            List<EventEnvelope> flow = session.fetchByCorrelationId("flow-1");
            assertThat(flow).extracting(EventEnvelope::streamId).containsExactly("a", "c", "c");
            assertThat(flow).extracting(EventEnvelope::tenantId).containsOnly("acme");
            assertThat(flow).extracting(EventEnvelope::sequence).isSorted();
            assertThat(session.fetchByCorrelationId("flow-2")).extracting(EventEnvelope::streamId).containsExactly("b");
            assertThat(session.fetchByCorrelationId("flow-3")).isEmpty();
            assertThatThrownBy(() -> session.fetchByCorrelationId(" ")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("correlation id");
        }
    }

    @Test
    void headersStoredAsTheJsonLiteralNullReadAsNone() {
        TestDatabase db = resources.database("metadatanull");
        DocumentStore store = storeWithoutDaemon(db);
        try (DocumentSession session = store.openSession()) {
            session.events().append("n", new OrderPlaced("n", "x", 1));
            session.saveChanges();
        }
        // what H2 before 2.3 (WildFly's bundled one) stores for a NULL bound through FORMAT JSON
        String update = "UPDATE " + db.table("pc_events") + " SET headers = ";
        switch (db.engine()) {
            case H2 -> db.execute(update + "JSON 'null'");
            case POSTGRESQL -> db.execute(update + "'null'::jsonb");
            // the ISJSON check takes objects and arrays only: the literal cannot be stored at all
            case SQL_SERVER -> assertThatThrownBy(() -> db.execute(update + "'null'")).hasMessageContaining("ck_pc_events_headers");
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.fetchStream("n").get(0).metadata()).isEqualTo(EventMetadata.NONE);
        }
    }

    @Test
    void metadataThatDoesNotFitIsRefusedWhereItIsGivenNamingWhat() {
        String tooLong = "c".repeat(251);
        assertThatThrownBy(() -> EventMetadata.NONE.withCorrelationId(tooLong))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("correlation id is 251 characters");
        assertThatThrownBy(() -> EventMetadata.NONE.withCausationId(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("causation id must not be blank");
        assertThatThrownBy(() -> EventMetadata.NONE.withHeader(" ", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("header name");
        assertThatThrownBy(() -> EventMetadata.NONE.withHeader("user", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("'user'");
        assertThatThrownBy(() -> EventMetadata.NONE.withHeader("h".repeat(101), "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1-100 characters");
    }

    @Test
    void anEventTableAnEarlierVersionCreatedGetsTheColumnsAndIndexAtStart() throws SQLException {
        TestDatabase db = resources.database("metadataupgrade");
        StoreOptions first = options(db);
        first.daemon().mode(DaemonMode.DISABLED);
        try (DocumentStore store = Ferret.createStore(first)) {
            try (DocumentSession session = store.openSession()) {
                session.events().append("old", new OrderPlaced("old", "alice", 1));
                session.saveChanges();
            }
        }
        // the table as the version before metadata left it
        String events = db.table("pc_events");
        db.execute("DROP INDEX " + (db.engine() == DatabaseEngine.SQL_SERVER ? "ix_pc_events_correlation ON " + events
                : db.schema() + ".ix_pc_events_correlation"));
        if (db.engine() == DatabaseEngine.SQL_SERVER) {
            db.execute("ALTER TABLE " + events + " DROP CONSTRAINT ck_pc_events_headers");
        }
        db.execute("ALTER TABLE " + events + " DROP COLUMN correlation_id");
        db.execute("ALTER TABLE " + events + " DROP COLUMN causation_id");
        db.execute("ALTER TABLE " + events + " DROP COLUMN headers");

        StoreOptions verifying = options(db).applyAllDatabaseChangesOnStartup(false);
        verifying.daemon().mode(DaemonMode.DISABLED);
        assertThatThrownBy(() -> Ferret.createStore(verifying)).isInstanceOf(SchemaException.class)
                .hasMessageContaining("pc_events.correlation_id").hasMessageContaining("pc_events.headers");

        StoreOptions upgrading = options(db);
        upgrading.daemon().mode(DaemonMode.DISABLED);
        DocumentStore store = resources.add(Ferret.createStore(upgrading));
        try (DocumentSession session = store.openSession()) {
            session.metadata(EventMetadata.NONE.withCorrelationId("after").withHeader("k", "v"));
            session.events().append("new", new OrderPlaced("new", "bob", 2));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.fetchStream("old").get(0).metadata()).isEqualTo(EventMetadata.NONE);
            assertThat(session.fetchByCorrelationId("after")).singleElement()
                    .satisfies(e -> assertThat(e.headers()).containsEntry("k", "v"));
        }
        assertThat(db.indexesOf("pc_events")).contains("ix_pc_events_correlation");
    }

    @Test
    void aLookupByCorrelationIdSeeksTheIndexOnATableOfManyEvents() throws SQLException {
        TestDatabase db = resources.database("metadataplan");
        DocumentStore store = storeWithoutDaemon(db);
        for (int save = 0; save < 20; save++) {
            try (DocumentSession session = store.openSession()) {
                for (int i = 0; i < 1_000; i++) {
                    int n = save * 1_000 + i;
                    // one event in ten belongs to a conversation of two events; the rest to none
                    if (n % 10 == 0) {
                        session.events().withMetadata(EventMetadata.NONE.withCorrelationId("flow-" + n / 20))
                                .append("s-" + n, new OrderPlaced("s-" + n, "x", n));
                    } else {
                        session.events().append("s-" + n, new OrderPlaced("s-" + n, "x", n));
                    }
                }
                session.saveChanges();
            }
        }
        String plan = explainCorrelated(db, "flow-7");
        if (db.engine() == DatabaseEngine.H2) {
            assertThat(plan).as(plan).containsIgnoringCase("ix_pc_events_correlation");
            assertThat(QueryPlans.h2RowsVisited(plan)).as("rows H2 visited, in %s", plan).isLessThan(10);
        } else if (db.engine() == DatabaseEngine.POSTGRESQL) {
            assertThat(plan).as(plan).contains("ix_pc_events_correlation").doesNotContain("Seq Scan");
        } else {
            assertThat(plan).as(plan).contains("Index=\"[ix_pc_events_correlation]\"")
                    .contains("PhysicalOp=\"Index Seek\"");
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.fetchByCorrelationId("flow-7")).extracting(EventEnvelope::streamId)
                    .containsExactly("s-140", "s-150");
        }
    }

    private static String explainCorrelated(TestDatabase db, String correlationId) throws SQLException {
        String sql = Dialects.of(db.engine()).eventSql(new TableNames(db.schema(), "pc_")).selectCorrelatedEvents();
        return QueryPlans.of(db, sql, (c, ps) -> {
            ps.setString(1, StoreOptions.DEFAULT_TENANT);
            ps.setString(2, correlationId);
        });
    }
}
