package dev.ferret.projections;

import dev.ferret.EventEnvelope;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Free-form: each event may load, store and delete any documents. Extend it and implement {@link #apply}.
 */
public abstract non-sealed class EventProjection extends Projection {

    private final Set<Class<?>> documentTypes;
    private Set<Class<?>> handledEventTypes = Set.of();

    protected EventProjection(String name, Class<?>... documentTypes) {
        super(name);
        this.documentTypes = Set.of(documentTypes);
    }

    /**
     * Declares the event types {@link #apply} handles, from the constructor. The store registers them at startup, so
     * that after a restart events of a type only this projection knows read back before this node appends one;
     * without it such a type must be registered with {@code StoreOptions.events().register} (or
     * {@code ferret.events.types} in the container), or its first event pauses the shard naming the unknown alias.
     */
    protected final void handles(Class<?>... eventTypes) {
        Set<Class<?>> declared = new LinkedHashSet<>(handledEventTypes);
        for (Class<?> type : eventTypes) {
            declared.add(Projection.require(type, "event type"));
        }
        handledEventTypes = Set.copyOf(declared);
    }

    /** The event types declared with {@link #handles}; empty when none were. */
    public Set<Class<?>> handledEventTypes() {
        return handledEventTypes;
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
