package dev.ferret.it.app;

import dev.ferret.EventUpcast;
import dev.ferret.StreamArchived;
import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.json.Json;

@ApplicationScoped
public class ItProjections {

    @Produces
    @AsyncProjection(name = "ItOrder")
    Snapshot<ItOrder> orders() {
        return Snapshot.of(ItOrder.class)
                .create(ItEvents.Placed.class, (id, e) -> new ItOrder(id, e.customer(), 1))
                .deleteOn(StreamArchived.class)
                .raiseSideEffects((doc, event, fx) -> {
                    // null once StreamArchived deleted it: nothing to announce
                    if (doc != null) {
                        fx.publish(new ItEvents.Announced(doc.id()));
                    }
                });
    }

    /** A two-stage composite: customers from orders, then their tier from what stage 1 wrote. */
    @Produces
    @AsyncProjection
    CompositeProjection customers() {
        return CompositeProjection.named("customers")
                .stage(MultiStreamProjection.of(ItCustomer.class)
                        .identity(ItEvents.Placed.class, ItEvents.Placed::customer)
                        .create(ItEvents.Placed.class, (id, e) -> new ItCustomer(id, 1))
                        .apply(ItEvents.Placed.class, (customer, e) -> new ItCustomer(customer.id(),
                                customer.orders() + 1)))
                .stage(new ItTiers());
    }

    /** Orders an earlier version of the application stored as {@code {"order": ..., "buyer": ...}}. */
    @Produces
    EventUpcast legacyPlaced() {
        return new EventUpcast.JsonStep("it_placed_v0", "Placed", v0 -> Json.createObjectBuilder()
                .add("orderId", v0.getString("order")).add("customer", v0.getString("buyer")).build());
    }
}
