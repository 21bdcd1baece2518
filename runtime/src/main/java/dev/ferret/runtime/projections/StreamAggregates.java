package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.JsonSerializer;
import dev.ferret.StreamCompacted;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Projection;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.projections.Snapshot;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The snapshot projections of a store by document type, to fold one stream on demand (live aggregation and
 * fetch-for-writing) with exactly the definition the daemon and inline projections fold it with. For each type the
 * inline registration is the one, else the highest version. Immutable; built once at assembly.
 */
public final class StreamAggregates {

    /**
     * A type's snapshot definition, whether it is kept current inline with every append, and the projection whose
     * shard keeps it when async (the snapshot itself, or the composite it is a member of).
     */
    public record Definition<T>(Snapshot<T> snapshot, boolean inline, Projection shard) {
    }

    private final Map<Class<?>, Definition<?>> byType;

    public StreamAggregates(List<ProjectionOptions.Registration> registrations) {
        Map<Class<?>, Definition<?>> found = new HashMap<>();
        for (ProjectionOptions.Registration registration : registrations) {
            for (Projection projection : registration.folding()) {
                if (!(projection instanceof Snapshot<?> snapshot)) {
                continue;
            }
                boolean inline = registration.lifecycle() == Lifecycle.INLINE;
                Definition<?> known = found.get(snapshot.documentType());
                if (known == null || inline && !known.inline()
                        || inline == known.inline() && snapshot.version() > known.snapshot().version()) {
                        found.put(snapshot.documentType(), new Definition<>(snapshot, inline,
                                registration.projection()));
                    }
            }
        }
        this.byType = Map.copyOf(found);
    }

    /**
     * The snapshot definition of {@code type}.
     *
     * @throws IllegalArgumentException naming the type when no snapshot projection of it is registered
     */
    @SuppressWarnings("unchecked")
    public <T> Definition<T> of(Class<T> type) {
        Definition<?> definition = byType.get(type);
        if (definition == null) {
            throw new IllegalArgumentException("no snapshot projection of " + type.getName() + " is registered;"
                    + " register one with options.projections().snapshot(" + type.getSimpleName() + ".class, ...)"
                    + " (any lifecycle) to aggregate its streams");
        }
        return (Definition<T>) definition;
    }

    /** {@code events} of stream {@code id} folded in order from nothing; null when they delete it or make none. */
    public static <T> T foldAll(AggregateProjection<T, ?> projection, String id, List<EventEnvelope> events,
                                JsonSerializer serializer) {
        T state = null;
        for (EventEnvelope event : events) {
            state = fold(projection, id, state, event, serializer);
        }
        return state;
    }

    /**
     * One event folded into {@code current} (null: no document yet): a deleting event gives null, a creating event
     * on nothing a new document, an applying event on a document the next one; events it does not handle change
     * nothing. A {@link StreamCompacted} snapshot of this projection is the state it holds, whatever came before.
     *
     * @throws IllegalStateException when a handler returns null (deleting is {@code deleteOn}'s job)
     */
    static <T> T fold(AggregateProjection<T, ?> projection, String id, T current, EventEnvelope event,
                      JsonSerializer serializer) {
        if (event.data() instanceof StreamCompacted compacted) {
            if (!compacted.projection().equals(projection.name())) {
                return current;
            }
            return compacted.state() == null ? null : serializer.fromJson(compacted.state(), projection.documentType());
        }
        Class<?> type = event.data().getClass();
        if (projection.deleters().contains(type)) {
            return null;
        }
        if (current == null) {
            BiFunction<String, Object, T> creator = projection.creators().get(type);
            return creator == null ? null : requireDocument(projection, creator.apply(id, event.data()), event);
        }
        BiFunction<T, Object, T> applier = projection.appliers().get(type);
        return applier == null ? current : requireDocument(projection, applier.apply(current, event.data()), event);
    }

    private static <T> T requireDocument(AggregateProjection<T, ?> projection, T document, EventEnvelope event) {
        if (document == null) {
            throw new IllegalStateException("projection " + projection.name() + " returned null for "
                    + event.typeName() + " at sequence " + event.sequence() + "; use deleteOn to delete");
        }
        return document;
    }
}
