package dev.ferret;

import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.UUID;

/**
 * One persisted event with its metadata.
 *
 * @param sequence  the global position in the event log; increasing, with holes where appends rolled back
 * @param eventId   unique id of this event
 * @param streamId  the stream it belongs to
 * @param version   its 1-based position within the stream
 * @param typeName  the stable alias its type is stored under
 * @param timestamp when it was appended
 * @param tenantId  the tenant it belongs to
 * @param data      the deserialized event
 */
public record EventEnvelope(long sequence, UUID eventId, String streamId, long version, String typeName,
                            OffsetDateTime timestamp, String tenantId, Object data) {

    public EventEnvelope {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(typeName, "typeName");
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(tenantId, "tenantId");
        Objects.requireNonNull(data, "data");
    }

    /** The event data cast to {@code type}. */
    public <T> T dataAs(Class<T> type) {
        return type.cast(data);
    }
}
