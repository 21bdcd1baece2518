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
     * Compacts the stream when the changes are saved: its events up to {@code throughVersion} are replaced by one
     * {@link StreamCompacted} event holding the state the snapshot projection registered for {@code aggregateType}
     * folds from them, at version {@code throughVersion} (the stream's versions and optimistic concurrency are
     * unchanged). The replaced events move to the archive table ({@link QuerySession#fetchStream(String, boolean)}
     * reads them), or are deleted when {@code keepReplaced} is false. Live aggregation, {@code fetchForWriting} and
     * a rebuild of that projection start from the snapshot and give the same document as before; other projections
     * of the stream see only what follows it.
     *
     * @throws IllegalArgumentException when {@code streamId} is not a valid id, {@code throughVersion} is below 1 or
     *                                  no snapshot projection of {@code aggregateType} is registered;
     *                                  {@code saveChanges()} throws and writes nothing when the stream does not exist,
     *                                  is shorter, or was already compacted past {@code throughVersion}
     */
    void compactStream(Class<?> aggregateType, String streamId, long throughVersion, boolean keepReplaced);

    /** {@link #compactStream(Class, String, long, boolean)}, keeping the replaced events in the archive. */
    default void compactStream(Class<?> aggregateType, String streamId, long throughVersion) {
        compactStream(aggregateType, streamId, throughVersion, true);
    }

    /**
     * These operations, with {@code metadata} over the session's for every append made through what this returns:
     * per-append correlation, causation or headers.
     */
    EventOperations withMetadata(EventMetadata metadata);
}
