package dev.ferret.projections;

import java.util.Objects;

/**
 * A side-effect message as the outbox delivers it. Delivery is at least once: a message whose delivery was in flight
 * when its node died (or whose publisher threw) is delivered again, with the same {@link #id()}, so a receiver that
 * remembers the ids it has seen can drop the repeat.
 *
 * @param id       stable across redeliveries: the message's outbox id
 * @param shard    the shard whose page published it
 * @param sequence the store-wide sequence of the event whose apply published it
 * @param tenantId the tenant of that event
 * @param payload  the message, as published, or read back from its JSON when another node (or an earlier run of
 *                 this one) wrote it
 */
public record OutboxMessage(String id, String shard, long sequence, String tenantId, Object payload) {

    public OutboxMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(payload, "payload");
    }
}
