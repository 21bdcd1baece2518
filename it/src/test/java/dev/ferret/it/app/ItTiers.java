package dev.ferret.it.app;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;

/** Stage 2 of the {@code customers} composite: reads what stage 1 wrote for the customer in the same page. */
public final class ItTiers extends EventProjection {

    public ItTiers() {
        super("ItTiers", ItTier.class);
    }

    @Override
    public void apply(EventEnvelope event, DocumentOperations operations) {
        if (event.data() instanceof ItEvents.Placed placed) {
            ItCustomer customer = operations.load(ItCustomer.class, placed.customer()).orElseThrow(
                    () -> new IllegalStateException("stage 1 wrote no customer " + placed.customer()));
            operations.store(new ItTier(customer.id(), customer.orders() >= 2 ? "gold" : "new", customer.orders()));
        }
    }
}
