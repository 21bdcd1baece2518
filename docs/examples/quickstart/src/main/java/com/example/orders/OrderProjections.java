package com.example.orders;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

@ApplicationScoped
public class OrderProjections {

    /** Folded by the async daemon, in the background, on the node that holds its shard. */
    @Produces
    @AsyncProjection
    Snapshot<OrderSummary> orderSummary() {
        return Snapshot.of(OrderSummary.class)
                .create(OrderPlaced.class, (id, e) -> new OrderSummary(id, e.customer(), e.amountCents(), "placed"))
                .apply(OrderShipped.class, (order, e) -> new OrderSummary(order.id(), order.customer(),
                        order.amountCents(), "shipped"));
    }
}
