package dev.ferret.subscriptions;

import dev.ferret.EventEnvelope;
import java.util.List;

/**
 * One page of events handed to a subscription.
 *
 * @param floor   the progression the page starts above
 * @param ceiling the progression the page moves the shard to when it commits
 * @param events  the events in {@code (floor, ceiling]} the subscription wants, in sequence order
 */
public record EventPage(long floor, long ceiling, List<EventEnvelope> events) {

    public EventPage {
        events = List.copyOf(events);
    }

    /** The events whose data is of {@code type}. */
    public <T> List<T> dataOf(Class<T> type) {
        return events.stream().map(EventEnvelope::data).filter(type::isInstance).map(type::cast).toList();
    }
}
