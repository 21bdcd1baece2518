package dev.ferret.projections;

/**
 * Receives side-effect messages from the outbox, each with the id it keeps across redeliveries. A publisher that
 * throws is called again for the same message after a back-off; the messages after it in its shard wait, so order
 * per shard holds.
 */
@FunctionalInterface
public interface SideEffectPublisher {

    void publish(OutboxMessage message) throws Exception;
}
