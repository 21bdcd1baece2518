package dev.ferret.daemon;

import java.time.OffsetDateTime;

/**
 * An event a shard could not apply or read and set aside, with the event as it is stored.
 *
 * @param id            the dead letter's own id, unique within its database
 * @param shardName     the shard that set it aside
 * @param sequence      the event's store-wide sequence
 * @param streamId      the event's stream; null when the event is no longer in the log
 * @param eventType     the event's type alias
 * @param tenantId      the event's tenant
 * @param errorType     the class of the exception the projection threw
 * @param message       that exception's message
 * @param failedAt      when the page that set it aside committed
 * @param eventJson     the event's stored JSON; null when the event is no longer in the log
 */
public record DeadLetterEvent(long id, String shardName, long sequence, String streamId, String eventType,
                              String tenantId, String errorType, String message, OffsetDateTime failedAt,
                              String eventJson) {
}
