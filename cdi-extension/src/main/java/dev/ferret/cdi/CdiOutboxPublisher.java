package dev.ferret.cdi;

import dev.ferret.projections.OutboxMessage;
import dev.ferret.projections.SideEffectPublisher;
import jakarta.enterprise.event.Event;

/**
 * The container's default side-effect publisher: every message from the outbox is fired as a synchronous CDI event,
 * twice over: as the {@link OutboxMessage} (id, shard, sequence, tenant, payload), for observers that deduplicate by
 * id, and as its payload, for observers of the message type. Observers run on the outbox dispatcher's thread (a
 * managed executor's), one message at a time in the shard's order; one that throws fails the delivery, which is
 * retried with the same id after the daemon's back-off, so observers run at least once per message. Observe one
 * of the two forms, not both, or each message reaches the application twice.
 */
final class CdiOutboxPublisher implements SideEffectPublisher {

    private final Event<Object> events;

    CdiOutboxPublisher(Event<Object> events) {
        this.events = events;
    }

    @Override
    public void publish(OutboxMessage message) {
        events.select(OutboxMessage.class).fire(message);
        events.fire(message.payload());
    }
}
