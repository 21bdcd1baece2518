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
     * Archives the stream when the changes are saved: in the save's transaction, before its appends, the stream's
     * events move from the live event table to the archive table (keeping their sequence numbers and versions), the
     * stream is marked archived, and a {@link StreamArchived} event is appended to it (it stays live, for the
     * projections). From then on the daemon, catch-up and rebuilds never read the archived events, and
     * {@link QuerySession#fetchStream(String)} and live aggregation leave them out
     * ({@link QuerySession#fetchStream(String, boolean)} reads them). Events appended later, in this session too, are
     * live; archiving again moves them. A shard that had not yet applied an archived event never will: archive
     * streams that are finished.
     *
     * @throws IllegalArgumentException when {@code streamId} is blank or longer than {@link IdLimits#MAX_ID_LENGTH};
     *                                  {@code saveChanges()} throws and writes nothing when the stream does not exist
     */
    void archiveStream(String streamId);

    /**
     * Brings an archived stream's events back into the live event table when the changes are saved, clears its
     * archived mark and appends a {@link StreamUnarchived} event. The {@link StreamArchived} events of earlier
     * archivings go to the archive instead, so fetching, aggregation and rebuilds see the stream as if it had never
     * been archived. The events keep their sequence numbers: the daemon's shards, which are past them, do not apply
     * them again, so a projection that deleted the stream's document on archiving gets it back from a rebuild.
     *
     * @throws IllegalArgumentException as {@link #archiveStream}; {@code saveChanges()} throws and writes nothing when
     *                                  the stream does not exist
     */
    void unarchiveStream(String streamId);

    /**
     * These operations, with {@code metadata} over the session's for every append made through what this returns:
     * per-append correlation, causation or headers.
     */
    EventOperations withMetadata(EventMetadata metadata);
}
