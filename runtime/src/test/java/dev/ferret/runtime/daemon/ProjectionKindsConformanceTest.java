package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Multi-stream and event projections, across tenants, in the daemon. */
@Tag("conformance")
class ProjectionKindsConformanceTest {

    public record OrderPlaced(String orderId, String customer, int cents) {
    }

    public record OrderCancelled(String orderId, String customer) {
    }

    public record CustomerSummary(String id, int orders, int cents) {
    }

    public record OrderIndex(String id, String customer) {
    }

    /** Keeps an index document per order, deleting it on cancellation: arbitrary operations per event. */
    public static final class OrderIndexProjection extends EventProjection {
        public OrderIndexProjection() {
            super("OrderIndex", OrderIndex.class);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (event.data() instanceof OrderPlaced placed) {
                operations.store(new OrderIndex(placed.orderId(), placed.customer()));
            } else if (event.data() instanceof OrderCancelled cancelled) {
                operations.load(OrderIndex.class, cancelled.orderId())
                        .ifPresent(index -> operations.delete(OrderIndex.class, index.id()));
            }
        }
    }

    @Test
    void multiStreamAndEventProjectionsFoldAcrossStreamsPerTenant() {
        try (TestDatabase db = TestDatabase.create("kinds")) {
            StoreOptions options = DaemonFixtures.fastDaemon(db);
            options.events().register(OrderPlaced.class).register(OrderCancelled.class);
            options.projections()
                    .add(MultiStreamProjection.of("CustomerSummary", CustomerSummary.class)
                            .identity(OrderPlaced.class, OrderPlaced::customer)
                            .identity(OrderCancelled.class, OrderCancelled::customer)
                            .create(OrderPlaced.class, (id, e) -> new CustomerSummary(id, 1, e.cents()))
                            .apply(OrderPlaced.class, (doc, e) -> new CustomerSummary(doc.id(), doc.orders() + 1,
                                    doc.cents() + e.cents()))
                            .apply(OrderCancelled.class, (doc, e) -> new CustomerSummary(doc.id(), doc.orders() - 1,
                                    doc.cents())), Lifecycle.ASYNC)
                    .add(new OrderIndexProjection(), Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                for (String tenant : List.of("acme", "globex")) {
                    try (DocumentSession session = store.openSession(tenant)) {
                        session.events().append("order-1", new OrderPlaced("order-1", "ann", 100));
                        session.events().append("order-2", new OrderPlaced("order-2", "ann", 50));
                        session.events().append("order-3", new OrderPlaced("order-3", "bob", 7));
                        session.saveChanges();
                    }
                }
                try (DocumentSession session = store.openSession("acme")) {
                    session.events().append("order-2", new OrderCancelled("order-2", "ann"));
                    session.saveChanges();
                }
                store.waitForNonStaleProjectionData(Duration.ofSeconds(60));

                assertThat(store.querySession("acme").load(CustomerSummary.class, "ann"))
                        .contains(new CustomerSummary("ann", 1, 150));
                assertThat(store.querySession("globex").load(CustomerSummary.class, "ann"))
                        .contains(new CustomerSummary("ann", 2, 150));
                assertThat(store.querySession("acme").load(CustomerSummary.class, "bob"))
                        .contains(new CustomerSummary("bob", 1, 7));
                assertThat(store.querySession("acme").query(OrderIndex.class).toList()).extracting(OrderIndex::id)
                        .containsExactly("order-1", "order-3");
                assertThat(store.querySession("globex").query(OrderIndex.class).where("customer", "ann").count())
                        .isEqualTo(2);
                assertThat(store.daemon().status().shards()).extracting(s -> s.name())
                        .containsExactly("CustomerSummary:All", "OrderIndex:All");
            }
        }
    }

    /** Handles an event type no other projection declares, and declares it. */
    public static final class DeclaringIndexProjection extends EventProjection {
        public DeclaringIndexProjection() {
            super("DeclaredIndex", OrderIndex.class);
            handles(OrderPlaced.class);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (event.data() instanceof OrderPlaced placed) {
                operations.store(new OrderIndex(placed.orderId(), placed.customer()));
            }
        }
    }

    @Test
    void anEventTypeOnlyAnEventProjectionHandlesReadsBackAfterARestartWhenTheProjectionDeclaresIt() {
        try (TestDatabase db = TestDatabase.create("declared")) {
            StoreOptions writer = db.options();
            writer.daemon().mode(DaemonMode.DISABLED);
            try (DocumentStore store = Ferret.createStore(writer);
                 DocumentSession session = store.openSession()) {
                // the append registers the type in this process only
                session.events().append("order-1", new OrderPlaced("order-1", "ann", 100));
                session.saveChanges();
            }
            // a restarted application that registers nothing by hand: the declaration alone names the type
            StoreOptions restarted = DaemonFixtures.fastDaemon(db);
            restarted.projections().add(new DeclaringIndexProjection(), Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(restarted)) {
                store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
                assertThat(store.querySession().load(OrderIndex.class, "order-1"))
                        .contains(new OrderIndex("order-1", "ann"));
                assertThat(store.daemon().status().shard("DeclaredIndex:All").orElseThrow().state())
                        .isEqualTo(ShardState.RUNNING);
            }
        }
    }
}
