package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.JsonSerializer;
import dev.ferret.StreamCompacted;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Folds a page into one document type: routes every event to its document ids, reads their committed state in one
 * statement per tenant, folds in memory and leaves one write per document. An event applies to all of its
 * documents or, when a handler throws, to none of them, and is reported once.
 */
final class AggregateApplier<T> extends ProjectionBackedApplier {

    private final AggregateProjection<T, ?> projection;
    private final DocumentMapping<T> mapping;
    private final Map<Class<?>, BiFunction<String, Object, T>> creators;
    private final Map<Class<?>, BiFunction<T, Object, T>> appliers;
    private final Set<Class<?>> deleters;
    /** Null for a snapshot: the stream id is the document id. */
    private final Map<Class<?>, Function<Object, Collection<?>>> routes;
    private final Set<String> aliases = new HashSet<>();
    private final AggregateProjection.SideEffectRaiser<T> raiser;
    /** Reads the state a compacted stream's snapshot holds. */
    private final JsonSerializer serializer;
    /** Set at assembly, before any shard runs, when another registration writes the same document type. */
    private boolean sharesItsDocuments;

    AggregateApplier(AggregateProjection<T, ?> projection, StoreContext context) {
        super(projection);
        this.projection = projection;
        this.mapping = context.mapping(projection.documentType(), projection.version());
        this.raiser = projection.sideEffectRaiser();
        this.creators = projection.creators();
        this.appliers = projection.appliers();
        this.deleters = projection.deleters();
        this.routes = projection instanceof MultiStreamProjection<?> multi ? multi.routes() : null;
        for (Class<?> type : projection.handledEventTypes()) {
            aliases.add(context.eventTypes().aliasOf(type));
        }
        if (routes == null) {
            // a snapshot folds its stream; a compacted stream starts from the snapshot of its fold
            aliases.add(context.eventTypes().aliasOf(StreamCompacted.class));
        }
        this.serializer = context.serializer();
    }


    @Override
    public boolean ownsItsDocuments() {
        return !sharesItsDocuments;
    }

    @Override
    public void sharesItsDocuments() {
        sharesItsDocuments = true;
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
        boolean[] failed = new boolean[events.size()];
        List<T> before = new ArrayList<>();
        List<T> after = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            EventEnvelope event = events.get(i);
            List<Key> keys = targets.get(i);
            if (keys.isEmpty()) {
                continue;
            }
            // the states before the event are read outside it: they are the page's, not the event's, reads
            before.clear();
            after.clear();
            for (Key key : keys) {
                before.add(working.containsKey(key) ? working.get(key) : mapping.type().cast(batch.current(key)));
            }
            batch.beginEvent();
            try {
                for (int k = 0; k < keys.size(); k++) {
                    T next = fold(keys.get(k).id(), before.get(k), event);
                    after.add(next);
                    if (raiser != null && handles(event)) {
                        raiser.raise(next, event, batch.sideEffects(event));
                    }
                }
            } catch (PageBatch.PageReadException e) {
                throw e;
            } catch (RuntimeException e) {
                // the event counts for none of its documents, or it would be half applied and dead-lettered
                batch.discardEvent();
                failed[i] = true;
                errors.onApplyError(event, e);
                for (int k = 0; k < keys.size(); k++) {
                    if (before.get(k) != null) {
                        working.put(keys.get(k), rebuild(keys.get(k), i, events, targets, failed, batch, e));
                    }
                }
                continue;
            }
            batch.keepEvent();
            Class<?> type = event.data().getClass();
            for (int k = 0; k < keys.size(); k++) {
                T next = after.get(k);
                working.put(keys.get(k), next);
                // an applier may return the same instance, changed in place
                if (next != before.get(k) || (next != null && appliers.containsKey(type))) {
                    touched.add(keys.get(k));
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

    /**
     * The document {@code key} as the page's kept events before {@code failedAt} left it. The failed event may have
     * changed the instance it was handed before it threw, so that instance is not trusted: the committed state is
     * read again and folded with those events. Runs only for a failed event, never on the hot path.
     */
    private T rebuild(Key key, int failedAt, List<EventEnvelope> events, List<List<Key>> targets, boolean[] failed,
                      PageBatch batch, RuntimeException failure) throws SQLException {
        T document = mapping.type().cast(batch.reread(key));
        for (int j = 0; j < failedAt; j++) {
            if (!failed[j] && targets.get(j).contains(key)) {
                try {
                    document = fold(key.id(), document, events.get(j));
                } catch (RuntimeException e) {
                    IllegalStateException error = new IllegalStateException("projection " + projection.name()
                            + " could not rebuild document '" + key.id() + "' after the event at sequence "
                            + events.get(failedAt).sequence() + " failed: the event at sequence "
                            + events.get(j).sequence() + ", applied before, now throws " + e
                            + "; the projection's handlers must give the same result every time", e);
                    error.addSuppressed(failure);
                    throw error;
                }
            }
        }
        return document;
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
            // a document named twice still sees the event once
            Set<Key> keys = new LinkedHashSet<>();
            for (Object id : ids) {
                keys.add(new Key(mapping, event.tenantId(), mapping.idFrom(id)));
            }
            return List.copyOf(keys);
        } catch (RuntimeException e) {
            errors.onApplyError(event, e);
            return List.of();
        }
    }

    /** Whether the projection's own handlers take {@code event}: side effects are raised only for those. */
    private boolean handles(EventEnvelope event) {
        Class<?> type = event.data().getClass();
        return creators.containsKey(type) || appliers.containsKey(type) || deleters.contains(type);
    }

    @Override
    public List<DocumentMapping<?>> documentMappings(StoreContext context) {
        return List.of(mapping);
    }

    /** The document after {@code event}: a new instance, the same one, or null when it is deleted. */
    private T fold(String id, T current, EventEnvelope event) {
        return StreamAggregates.fold(projection, id, current, event, serializer);
    }
}
