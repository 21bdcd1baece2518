package dev.ferret.projections;

import dev.ferret.EventEnvelope;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Folds events into one document type: a document is created from an event, evolved by later ones and deleted on
 * chosen ones. Which document an event belongs to is what tells a {@link Snapshot} from a
 * {@link MultiStreamProjection}. Handlers are registered explicitly, once; nothing is looked up per event.
 *
 * <p>An event whose document does not exist yet and that has no {@code create} handler is ignored for that
 * document, as is an event type with no handler at all.
 */
public abstract sealed class AggregateProjection<T, SELF extends AggregateProjection<T, SELF>> extends Projection
        permits Snapshot, MultiStreamProjection {

    private final Class<T> documentType;
    private final Map<Class<?>, BiFunction<String, Object, T>> creators = new LinkedHashMap<>();
    private final Map<Class<?>, BiFunction<T, Object, T>> appliers = new LinkedHashMap<>();
    private final Map<Class<?>, Boolean> deleters = new LinkedHashMap<>();
    private SideEffectRaiser<T> sideEffects;

    /** Raises side effects for one applied event, given the document after it (null when deleted). */
    @FunctionalInterface
    public interface SideEffectRaiser<T> {
        void raise(T document, EventEnvelope event, SideEffects effects);
    }

    AggregateProjection(String name, Class<T> documentType) {
        super(name);
        this.documentType = require(documentType, "documentType");
    }

    @SuppressWarnings("unchecked")
    private SELF self() {
        return (SELF) this;
    }

    /** Creates the document from the first event of {@code eventType} it sees. */
    @SuppressWarnings("unchecked")
    public <E> SELF create(Class<E> eventType, Function<? super E, ? extends T> creator) {
        require(creator, "creator");
        creators.put(require(eventType, "eventType"), (id, e) -> creator.apply((E) e));
        return self();
    }

    /**
     * Creates the document from the first event of {@code eventType} it sees, given the document's id (the stream
     * id of a snapshot, the routed id of a multi-stream projection).
     */
    @SuppressWarnings("unchecked")
    public <E> SELF create(Class<E> eventType, BiFunction<String, ? super E, ? extends T> creator) {
        require(creator, "creator");
        creators.put(require(eventType, "eventType"), (id, e) -> creator.apply(id, (E) e));
        return self();
    }

    /** Evolves an existing document; return the new state (records) or the same, mutated, instance. */
    @SuppressWarnings("unchecked")
    public <E> SELF apply(Class<E> eventType, BiFunction<? super T, ? super E, ? extends T> applier) {
        require(applier, "applier");
        appliers.put(require(eventType, "eventType"), (doc, e) -> applier.apply(doc, (E) e));
        return self();
    }

    /** Deletes the document when an event of {@code eventType} arrives. */
    public SELF deleteOn(Class<?> eventType) {
        deleters.put(require(eventType, "eventType"), Boolean.TRUE);
        return self();
    }

    /** Raises side effects for every event applied; delivered after the page commits. */
    public SELF raiseSideEffects(SideEffectRaiser<T> raiser) {
        this.sideEffects = require(raiser, "raiser");
        return self();
    }

    public SideEffectRaiser<T> sideEffectRaiser() {
        return sideEffects;
    }

    /** See {@link Projection#commitAlone}. */
    public SELF ownTransaction(boolean own) {
        commitAlone(own);
        return self();
    }

    /** See {@link Projection#gateSideEffects}. */
    public SELF gateSideEffectsBehindPriorVersion(boolean gate) {
        gateSideEffects(gate);
        return self();
    }

    /** Sets the version (default 1). */
    public SELF withVersion(int version) {
        version(version);
        return self();
    }

    public Class<T> documentType() {
        return documentType;
    }

    @Override
    public Set<Class<?>> documentTypes() {
        return Set.of(documentType);
    }

    public Map<Class<?>, BiFunction<String, Object, T>> creators() {
        return Map.copyOf(creators);
    }

    public Map<Class<?>, BiFunction<T, Object, T>> appliers() {
        return Map.copyOf(appliers);
    }

    public Set<Class<?>> deleters() {
        return Set.copyOf(deleters.keySet());
    }

    /** Every event type with a handler: the only ones this projection needs to see. */
    public Set<Class<?>> handledEventTypes() {
        Set<Class<?>> types = new LinkedHashSet<>(creators.keySet());
        types.addAll(appliers.keySet());
        types.addAll(deleters.keySet());
        return Set.copyOf(types);
    }
}
