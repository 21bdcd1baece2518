package dev.ferret;

import java.time.OffsetDateTime;
import java.util.Map;
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
 * @param metadata  its correlation id, causation id and headers ({@link EventMetadata#NONE} when it has none)
 */
public record EventEnvelope(long sequence, UUID eventId, String streamId, long version, String typeName,
                            OffsetDateTime timestamp, String tenantId, Object data, EventMetadata metadata) {

    /** An event without metadata. */
    public EventEnvelope(long sequence, UUID eventId, String streamId, long version, String typeName,
                         OffsetDateTime timestamp, String tenantId, Object data) {
        this(sequence, eventId, streamId, version, typeName, timestamp, tenantId, data, EventMetadata.NONE);
    }

    public EventEnvelope {
        Objects.requireNonNull(metadata, "metadata");
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(typeName, "typeName");
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(tenantId, "tenantId");
        Objects.requireNonNull(data, "data");
    }

    /** The conversation the event belongs to, or null. */
    public String correlationId() {
        return metadata.correlationId();
    }

    /** What caused the event, or null. */
    public String causationId() {
        return metadata.causationId();
    }

    /** The event's headers; empty when it has none. */
    public Map<String, String> headers() {
        return metadata.headers();
    }

    /** The event data cast to {@code type}. */
    public <T> T dataAs(Class<T> type) {
        return type.cast(data);
    }
}
