package dev.ferret.it.app;

import dev.ferret.EventEnvelope;
import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import jakarta.enterprise.context.Dependent;

/** Throws on a Poison event: its shard pauses (a health problem; liveness stays UP). */
@Dependent
@AsyncProjection
public class FragileProjection extends EventProjection {

    public FragileProjection() {
        super("Fragile", FragileDoc.class);
    }

    @Override
    public void apply(EventEnvelope event, DocumentOperations operations) {
        if (event.data() instanceof ItEvents.Poison poison) {
            throw new IllegalStateException("poison in " + poison.orderId());
        }
    }
}
