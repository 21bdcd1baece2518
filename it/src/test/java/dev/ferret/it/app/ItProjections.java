package dev.ferret.it.app;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

@ApplicationScoped
public class ItProjections {

    @Produces
    @AsyncProjection(name = "ItOrder")
    Snapshot<ItOrder> orders() {
        return Snapshot.of(ItOrder.class)
                .create(ItEvents.Placed.class, (id, e) -> new ItOrder(id, e.customer(), 1));
    }
}
