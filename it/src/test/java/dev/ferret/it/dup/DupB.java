package dev.ferret.it.dup;

import dev.ferret.EventEnvelope;
import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import jakarta.enterprise.context.Dependent;

@Dependent
@AsyncProjection
public class DupB extends EventProjection {
    public DupB() {
        super("Dup");
    }

    @Override
    public void apply(EventEnvelope event, DocumentOperations operations) {
    }
}
