package dev.ferret.runtime.events;

import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.JsonSerializer;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * An event row as stored, its data still JSON: what a page load keeps when several shards read it, so that each
 * shard turns only the rows it wants into events. Immutable.
 *
 * @param headers the stored headers object, or null
 */
public record StoredEvent(long sequence, String id, String streamId, long version, String alias, String data,
                          OffsetDateTime timestamp, String tenantId, String correlationId, String causationId,
                          String headers) {

    /**
     * The event as its type of today: an alias that is upcast is read through its upcasts and carries the alias they
     * lead to.
     *
     * @throws dev.ferret.UnknownEventTypeException when its type alias is not registered
     */
    public EventEnvelope read(EventTypes types, JsonSerializer serializer) {
        Object payload = types.read(alias, data, sequence, serializer);
        return new EventEnvelope(sequence, UUID.fromString(id), streamId, version, types.currentAlias(alias), timestamp,
                tenantId, payload, metadata());
    }

    private EventMetadata metadata() {
        var headerMap = EventRows.headersOf(headers);
        if (correlationId == null && causationId == null && headerMap.isEmpty()) {
            return EventMetadata.NONE;
        }
        return new EventMetadata(correlationId, causationId, headerMap);
    }

    /** What the row costs in memory, roughly: its strings as UTF-16 and the objects around them. */
    public long weight() {
        return 2L * (length(id) + length(streamId) + length(alias) + length(data) + length(tenantId)
                + length(correlationId) + length(causationId) + length(headers)) + 200;
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }
}
