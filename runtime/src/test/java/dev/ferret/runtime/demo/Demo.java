package dev.ferret.runtime.demo;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.runtime.Ferret;

/**
 * The README's first command: appends a few events to an embedded H2 event store and prints them back. Replaced by
 * the Liberty sample once the Jakarta EE binding lands.
 */
public final class Demo {

    public record OrderPlaced(String orderId, String customer, int cents) {
    }

    public record OrderShipped(String orderId, String carrier) {
    }

    public record OrderSummary(String id, String customer, String status) {
    }

    private Demo() {
    }

    public static void main(String[] args) {
        try (DocumentStore store = Ferret.createStore(options -> options
                .applyAllDatabaseChangesOnStartup(true)
                .documents().register(OrderSummary.class))) {
            try (DocumentSession session = store.openSession()) {
                session.events().append("order-1", new OrderPlaced("order-1", "alice", 4_200));
                session.store(new OrderSummary("order-1", "alice", "placed"));
                session.saveChanges();
            }
            try (DocumentSession session = store.openSession()) {
                session.events().append("order-1", 1, java.util.List.of(new OrderShipped("order-1", "dhl")));
                session.store(new OrderSummary("order-1", "alice", "shipped"));
                session.saveChanges();
            }
            System.out.println("Events of stream order-1 on " + store.engine() + ":");
            for (EventEnvelope event : store.querySession().fetchStream("order-1")) {
                System.out.printf("  #%d v%d %-12s %s%n", event.sequence(), event.version(), event.typeName(),
                        event.data());
            }
            System.out.println("Shipped orders: " + store.querySession().query(OrderSummary.class)
                    .where("status", "shipped").toList());
        }
    }
}
