package dev.ferret;

import java.util.Arrays;
import java.util.List;

/** Buffers event appends in a {@link DocumentSession}; they are written by {@code saveChanges()}. */
public interface EventOperations {

    /**
     * Appends to a stream, creating it when it does not exist.
     *
     * @throws IllegalArgumentException when {@code events} is null, empty or holds a null, or {@code streamId} is
     *                                  blank or longer than {@link IdLimits#MAX_ID_LENGTH}
     */
    void append(String streamId, List<?> events);

    /**
     * Appends to a stream, creating it when it does not exist. A leading {@code Integer} or {@code Long} is the
     * version the stream must be at, as in {@code append(id, 2, event)}: a number is never an event (events are JSON
     * objects), so this reads the habit of other event stores the way it is meant, the same as
     * {@link #append(String, long, List)}.
     */
    default void append(String streamId, Object... events) {
        if (events != null && events.length > 0 && (events[0] instanceof Integer || events[0] instanceof Long)) {
            long expectedVersion = ((Number) events[0]).longValue();
            if (events.length == 1) {
                throw new IllegalArgumentException("append to stream '" + streamId + "' at expected version "
                        + expectedVersion + " names no event");
            }
            append(streamId, expectedVersion, Arrays.asList(events).subList(1, events.length));
            return;
        }
        append(streamId, events == null ? null : Arrays.asList(events));
    }

    /**
     * Appends to a stream that must be at {@code expectedVersion} when the changes are saved; 0 means the stream
     * must not exist yet. Otherwise {@code saveChanges()} throws {@link ConcurrencyException} and writes nothing.
     */
    void append(String streamId, long expectedVersion, List<?> events);

    /**
     * Starts a new stream of {@code aggregateType}; {@code saveChanges()} throws {@link ConcurrencyException} when
     * the stream already exists.
     */
    void startStream(String streamId, Class<?> aggregateType, List<?> events);

    /**
     * These operations, with {@code metadata} over the session's for every append made through what this returns:
     * per-append correlation, causation or headers.
     */
    EventOperations withMetadata(EventMetadata metadata);
}
