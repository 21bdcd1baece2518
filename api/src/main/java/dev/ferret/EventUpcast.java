package dev.ferret;

import jakarta.json.JsonObject;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One step from a shape events were once stored in towards a type the application has today, registered with
 * {@code StoreOptions.events().upcast(...)}. Applied whenever an event is read (sessions, the async daemon,
 * subscriptions, inline projections reading a stream), never written back: the stored row keeps its alias and JSON.
 * Steps compose: an event stored under {@code order_placed_v1} may be carried to {@code order_placed_v2} by one step
 * and to the current type by another.
 */
public sealed interface EventUpcast permits EventUpcast.JsonStep, EventUpcast.TypedStep {

    /** The alias the events this step reads were stored (or carried) under. */
    String fromAlias();

    /**
     * Rewrites the stored JSON object of {@code fromAlias} into the JSON of {@code toAlias}, which is either a
     * registered event type or the {@code fromAlias} of a further step.
     */
    record JsonStep(String fromAlias, String toAlias, UnaryOperator<JsonObject> transform) implements EventUpcast {
    }

    /**
     * Reads the JSON of {@code fromAlias} as {@code storedShape} (a class kept for the purpose) and converts it into
     * {@code currentType}, which ends the chain.
     */
    record TypedStep<O, T>(String fromAlias, Class<O> storedShape, Class<T> currentType,
                           Function<? super O, ? extends T> convert) implements EventUpcast {
    }
}
