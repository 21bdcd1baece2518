package dev.ferret.projections;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Documents fed by events of many streams, each event routed to one or more document ids (a per-customer summary,
 * a dashboard). Events of a type with no route are not seen.
 */
public final class MultiStreamProjection<T> extends AggregateProjection<T, MultiStreamProjection<T>> {

    private final Map<Class<?>, Function<Object, Collection<?>>> routes = new LinkedHashMap<>();

    private MultiStreamProjection(String name, Class<T> documentType) {
        super(name, documentType);
    }

    public static <T> MultiStreamProjection<T> of(Class<T> documentType) {
        return new MultiStreamProjection<>(documentType.getSimpleName(), documentType);
    }

    public static <T> MultiStreamProjection<T> of(String name, Class<T> documentType) {
        return new MultiStreamProjection<>(name, documentType);
    }

    /** Routes each event of {@code eventType} to the document with the id {@code identity} returns. */
    @SuppressWarnings("unchecked")
    public <E> MultiStreamProjection<T> identity(Class<E> eventType, Function<? super E, ?> identity) {
        require(identity, "identity");
        routes.put(require(eventType, "eventType"), e -> List.of(identity.apply((E) e)));
        return this;
    }

    /** Routes each event of {@code eventType} to every document id {@code identities} returns. */
    @SuppressWarnings("unchecked")
    public <E> MultiStreamProjection<T> identities(Class<E> eventType,
                                                   Function<? super E, ? extends Collection<?>> identities) {
        require(identities, "identities");
        routes.put(require(eventType, "eventType"), e -> identities.apply((E) e));
        return this;
    }

    public Map<Class<?>, Function<Object, Collection<?>>> routes() {
        return Map.copyOf(routes);
    }
}
