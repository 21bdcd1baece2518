package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Folds a page into one document type: routes every event to its document ids, reads their committed state in one
 * statement per tenant, folds in memory and leaves one write per document.
 */
final class AggregateApplier<T> extends ProjectionBackedApplier {

    private final AggregateProjection<T, ?> projection;
    private final DocumentMapping<T> mapping;
    private final Map<Class<?>, BiFunction<String, Object, T>> creators;
    private final Map<Class<?>, BiFunction<T, Object, T>> appliers;
    private final Set<Class<?>> deleters;
    /** Null for a snapshot: the stream id is the document id. */
    private final Map<Class<?>, Function<Object, Collection<?>>> routes;
    private final Set<String> aliases = new java.util.HashSet<>();
    private final AggregateProjection.SideEffectRaiser<T> raiser;

    AggregateApplier(AggregateProjection<T, ?> projection, FerretDocumentStore store) {
        super(projection);
        this.projection = projection;
        this.mapping = store.mapping(projection.documentType(), projection.version());
        this.raiser = projection.sideEffectRaiser();
        this.creators = projection.creators();
        this.appliers = projection.appliers();
        this.deleters = projection.deleters();
        this.routes = projection instanceof MultiStreamProjection<?> multi ? multi.routes() : null;
        for (Class<?> type : projection.handledEventTypes()) {
            aliases.add(store.eventTypes().aliasOf(type));
        }
    }


    @Override
    public boolean wants(String alias) {
        return aliases.contains(alias);
    }

    @Override
    public void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException {
        // route first, so committed state is read in one statement per tenant rather than per document
        List<List<Key>> targets = new ArrayList<>(events.size());
        Map<String, Set<String>> idsByTenant = new LinkedHashMap<>();
        for (EventEnvelope event : events) {
            List<Key> keys = route(event, errors);
            targets.add(keys);
            for (Key key : keys) {
                idsByTenant.computeIfAbsent(key.tenantId(), t -> new LinkedHashSet<>()).add(key.id());
            }
        }
        for (Map.Entry<String, Set<String>> tenant : idsByTenant.entrySet()) {
            batch.preload(mapping, tenant.getKey(), tenant.getValue());
        }

        Map<Key, T> working = new HashMap<>();
        Set<Key> touched = new LinkedHashSet<>();
        for (int i = 0; i < events.size(); i++) {
            EventEnvelope event = events.get(i);
            for (Key key : targets.get(i)) {
                T current = working.containsKey(key) ? working.get(key) : mapping.type().cast(batch.current(key));
                try {
                    T next = fold(key.id(), current, event);
                    working.put(key, next);
                    if (next != current) {
                        touched.add(key);
                    }
                    if (raiser != null && handles(event)) {
                        raiser.raise(next, event, batch.sideEffects(event.tenantId()));
                    }
                } catch (RuntimeException e) {
                    working.put(key, current);
                    errors.onApplyError(event, e);
                }
            }
        }
        for (Key key : touched) {
            T document = working.get(key);
            if (document == null) {
                batch.changes().delete(key);
            } else {
                batch.changes().store(key, document);
            }
        }
    }

    private List<Key> route(EventEnvelope event, ApplyErrorHandler errors) {
        Class<?> type = event.data().getClass();
        if (routes == null) {
            return List.of(new Key(mapping, event.tenantId(), event.streamId()));
        }
        Function<Object, Collection<?>> route = routes.get(type);
        if (route == null) {
            return List.of();
        }
        try {
            Collection<?> ids = route.apply(event.data());
            List<Key> keys = new ArrayList<>(ids.size());
            for (Object id : ids) {
                keys.add(new Key(mapping, event.tenantId(), mapping.idFrom(id)));
            }
            return keys;
        } catch (RuntimeException e) {
            errors.onApplyError(event, e);
            return List.of();
        }
    }

    private boolean handles(EventEnvelope event) {
        Class<?> type = event.data().getClass();
        return creators.containsKey(type) || appliers.containsKey(type) || deleters.contains(type);
    }

    @Override
    public java.util.List<DocumentMapping<?>> documentMappings(FerretDocumentStore store) {
        return java.util.List.of(mapping);
    }

    /** The document after {@code event}: a new instance, the same one, or null when it is deleted. */
    private T fold(String id, T current, EventEnvelope event) {
        Class<?> type = event.data().getClass();
        if (deleters.contains(type)) {
            return null;
        }
        if (current == null) {
            BiFunction<String, Object, T> creator = creators.get(type);
            return creator == null ? null : requireDocument(creator.apply(id, event.data()), event);
        }
        BiFunction<T, Object, T> applier = appliers.get(type);
        return applier == null ? current : requireDocument(applier.apply(current, event.data()), event);
    }

    private T requireDocument(T document, EventEnvelope event) {
        if (document == null) {
            throw new IllegalStateException("projection " + projection.name() + " returned null for "
                    + event.typeName() + " at sequence " + event.sequence() + "; use deleteOn to delete");
        }
        return document;
    }
}
