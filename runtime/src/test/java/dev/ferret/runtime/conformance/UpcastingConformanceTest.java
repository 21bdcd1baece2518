package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.UnknownEventTypeException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import jakarta.json.Json;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Events stored years ago under shapes the application no longer has are read as today's types through upcasts:
 * a JSON rewrite and a typed conversion compose, sessions and the async daemon see the same result, the stored rows
 * keep their alias and JSON, and a misconfigured chain fails at start naming its aliases.
 */
@Tag("conformance")
class UpcastingConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** The first shape, stored as {@code order_placed_v1}: an order number and an amount in cents. */
    public record OrderPlacedV1(String order, int cents) {
    }

    /** The second shape, kept only to read {@code order_placed_v2}: the customer was added, cents stayed. */
    public record OrderPlacedV2(String orderId, String customer, int cents) {
    }

    /** What an async snapshot makes of every order of a stream. */
    public record Totals(String id, int orders, int amount) {
    }

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    @Test
    void oldEventsReadAsTodaysTypeThroughAJsonRewriteAndATypedConversionAndTheirRowsStayAsStored() {
        TestDatabase db = resources.database("upcast");
        String stream = Fixtures.newStreamId();
        appendOldOrders(db, stream);

        DocumentStore store = resources.add(Ferret.createStore(upcasting(db)));
        List<EventEnvelope> events = store.querySession().fetchStream(stream);
        assertThat(events).extracting(EventEnvelope::data).containsExactly(
                new OrderPlaced("o-1", "unknown", 12), new OrderPlaced("o-2", "unknown", 3));
        assertThat(events).extracting(EventEnvelope::typeName).containsOnly("order_placed");
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events") + " WHERE stream_id = '" + stream
                + "' AND type = 'order_placed_v1'")).as("rows keep the alias they were stored under").isEqualTo(2);
        String data = db.engine() == DatabaseEngine.H2 ? "CAST(data AS VARCHAR)" : "CAST(data AS VARCHAR(4000))";
        assertThat(db.queryString("SELECT " + data + " FROM " + db.table("pc_events") + " WHERE stream_id = '"
                + stream + "' AND version = 1")).as("and their JSON").contains("\"order\"").doesNotContain("orderId");
    }

    @Test
    void theAsyncDaemonFoldsUpcastEventsWithTodaysEvents() {
        TestDatabase db = resources.database("upcastdaemon");
        String stream = Fixtures.newStreamId();
        appendOldOrders(db, stream);

        StoreOptions options = upcasting(db);
        options.daemon().mode(DaemonMode.SOLO).pollingInterval(Duration.ofMillis(50));
        options.projections().add(totals(), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o-3", "ann", 100));
            session.saveChanges();
        }
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(store.querySession().load(Totals.class, stream)).contains(new Totals(stream, 3, 115));
    }

    @Test
    void anUpcastThatThrowsPausesTheShardNamingTheEventAndLosesNothing() {
        TestDatabase db = resources.database("upcastbad");
        String stream = Fixtures.newStreamId();
        appendOldOrders(db, stream);

        StoreOptions options = db.options();
        options.events().register(OrderPlaced.class, "order_placed")
                .upcast("order_placed_v1", "order_placed", old -> {
                    throw new IllegalArgumentException("no customer for " + old.getString("order"));
                });
        options.daemon().mode(DaemonMode.SOLO).pollingInterval(Duration.ofMillis(50));
        options.projections().add(totals(), Lifecycle.ASYNC);
        DocumentStore store = resources.add(Ferret.createStore(options));
        await().atMost(WAIT).until(() -> store.daemon().status().shard("Totals:All").map(ShardStatus::state)
                .orElse(null) == ShardState.PAUSED);
        ShardStatus paused = store.daemon().status().shard("Totals:All").orElseThrow();
        assertThat(paused.error()).hasStackTraceContaining("order_placed_v1").hasStackTraceContaining("no customer for o-1");
        assertThat(paused.progression()).isZero();
    }

    @Test
    void anOldAliasWithNeitherARegistrationNorAnUpcastKeepsItsClearError() {
        TestDatabase db = resources.database("upcastnone");
        String stream = Fixtures.newStreamId();
        appendOldOrders(db, stream);
        DocumentStore store = resources.add(Ferret.createStore(db.options()));
        assertThatThrownBy(() -> store.querySession().fetchStream(stream)).isInstanceOf(UnknownEventTypeException.class)
                .hasMessageContaining("order_placed_v1");
    }

    @Test
    void chainsThatCannotBeReadFailAtStartNamingTheirAliases() {
        TestDatabase db = resources.database("upcastcfg");
        StoreOptions circle = db.options();
        circle.events().upcast("a", "b", json -> json).upcast("b", "a", json -> json);
        assertThatThrownBy(() -> Ferret.createStore(circle)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("'a'").hasMessageContaining("circle");

        StoreOptions nowhere = db.options();
        nowhere.events().upcast("a", "b", json -> json);
        assertThatThrownBy(() -> Ferret.createStore(nowhere)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("'a' is upcast to 'b'");

        StoreOptions both = db.options();
        both.events().register(OrderPlaced.class, "order_placed").upcast("order_placed", "x", json -> json);
        assertThatThrownBy(() -> Ferret.createStore(both)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("'order_placed' is registered for");

        assertThatThrownBy(() -> db.options().events().upcast("a", "b", json -> json).upcast("a", "c", json -> json))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'a' already has an upcast");
    }

    /** Every order of a stream, counted and summed. */
    private static Snapshot<Totals> totals() {
        return Snapshot.of("Totals", Totals.class)
                .create(OrderPlaced.class, (id, e) -> new Totals(id, 1, e.amount()))
                .apply(OrderPlaced.class, (doc, e) -> new Totals(doc.id(), doc.orders() + 1, doc.amount() + e.amount()));
    }

    /** Two orders stored by an application version that had only the first shape. */
    private void appendOldOrders(TestDatabase db, String stream) {
        StoreOptions old = db.options();
        old.events().register(OrderPlacedV1.class, "order_placed_v1");
        try (DocumentStore store = Ferret.createStore(old); DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlacedV1("o-1", 1200), new OrderPlacedV1("o-2", 300));
            session.saveChanges();
        }
    }

    /** Today's application: v1 is rewritten into v2's JSON, and v2 is converted into today's type. */
    private static StoreOptions upcasting(TestDatabase db) {
        StoreOptions options = db.options();
        options.events().register(OrderPlaced.class, "order_placed")
                .upcast("order_placed_v1", "order_placed_v2", v1 -> Json.createObjectBuilder()
                        .add("orderId", v1.getString("order"))
                        .add("customer", "unknown")
                        .add("cents", v1.getInt("cents"))
                        .build())
                .upcast("order_placed_v2", OrderPlacedV2.class, OrderPlaced.class,
                        v2 -> new OrderPlaced(v2.orderId(), v2.customer(), v2.cents() / 100));
        return options;
    }
}
