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

    /** Appends to a stream, creating it when it does not exist. */
    default void append(String streamId, Object... events) {
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
