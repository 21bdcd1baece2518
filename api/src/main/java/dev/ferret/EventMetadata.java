package dev.ferret;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What an event carries besides its data: the id of the conversation it belongs to, the id of what caused it, and
 * small string headers. Stored with each event, and handed to projections, subscriptions and listeners on its
 * {@link EventEnvelope}. Immutable.
 *
 * <pre>{@code
 * session.metadata(EventMetadata.NONE.withCorrelationId(requestId).withHeader("user", user));
 * session.events().withMetadata(EventMetadata.NONE.withCausationId(command.id())).append("order-1", placed);
 * }</pre>
 *
 * @param correlationId the conversation the event belongs to, or null; at most {@link IdLimits#MAX_ID_LENGTH}
 *                      characters, and looked up by {@link QuerySession#fetchByCorrelationId}
 * @param causationId   the id of the message or event that caused it, or null; at most
 *                      {@link IdLimits#MAX_ID_LENGTH} characters
 * @param headers       names (1 to {@link #MAX_HEADER_NAME_LENGTH} characters) and values, never null
 */
public record EventMetadata(String correlationId, String causationId, Map<String, String> headers) {

    /** No correlation, no causation, no headers. */
    public static final EventMetadata NONE = new EventMetadata(null, null, Map.of());

    /** The longest header name. */
    public static final int MAX_HEADER_NAME_LENGTH = 100;

    /**
     * @throws IllegalArgumentException naming the value when an id is blank or longer than
     *                                  {@link IdLimits#MAX_ID_LENGTH}, or a header has a blank or too long name or a
     *                                  null value
     */
    public EventMetadata {
        IdLimits.requireOptionalId("correlation id", correlationId);
        IdLimits.requireOptionalId("causation id", causationId);
        Map<String, String> copy = new LinkedHashMap<>();
        if (headers != null) {
            headers.forEach((name, value) -> {
                if (name == null || name.isBlank() || name.length() > MAX_HEADER_NAME_LENGTH) {
                    throw new IllegalArgumentException("an event header name must be 1-" + MAX_HEADER_NAME_LENGTH
                            + " characters and not blank, was " + (name == null ? "null" : "'" + name + "'"));
                }
                copy.put(name, Objects.requireNonNull(value, () -> "value of event header '" + name + "'"));
            });
        }
        headers = Map.copyOf(copy);
    }

    /** This metadata with {@code correlationId} (null: none). */
    public EventMetadata withCorrelationId(String correlationId) {
        return new EventMetadata(correlationId, causationId, headers);
    }

    /** This metadata with {@code causationId} (null: none). */
    public EventMetadata withCausationId(String causationId) {
        return new EventMetadata(correlationId, causationId, headers);
    }

    /** This metadata with header {@code name} set to {@code value}. */
    public EventMetadata withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new EventMetadata(correlationId, causationId, more);
    }

    /** This metadata, with what it leaves unset taken from {@code defaults}; headers of both, this one's winning. */
    public EventMetadata over(EventMetadata defaults) {
        Map<String, String> merged = new LinkedHashMap<>(defaults.headers());
        merged.putAll(headers);
        return new EventMetadata(correlationId != null ? correlationId : defaults.correlationId(),
                causationId != null ? causationId : defaults.causationId(), merged);
    }

    /** Whether it carries nothing. */
    public boolean isEmpty() {
        return correlationId == null && causationId == null && headers.isEmpty();
    }
}
