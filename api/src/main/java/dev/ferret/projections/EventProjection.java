package dev.ferret.projections;

import dev.ferret.EventEnvelope;
import java.util.Set;

/**
 * Free-form: each event may load, store and delete any documents. Extend it and implement {@link #apply}.
 */
public abstract non-sealed class EventProjection extends Projection {

    private final Set<Class<?>> documentTypes;

    protected EventProjection(String name, Class<?>... documentTypes) {
        super(name);
        this.documentTypes = Set.of(documentTypes);
    }

    /** Applies one event; called in sequence order. A throw is an apply error, handled by the error policy. */
    public abstract void apply(EventEnvelope event, DocumentOperations operations);

    /** Raises side effects for one applied event; delivered after the page commits. Nothing by default. */
    public void raiseSideEffects(EventEnvelope event, SideEffects effects) {
    }

    @Override
    public Set<Class<?>> documentTypes() {
        return documentTypes;
    }
}
