package dev.ferret;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Reads documents and events for one tenant. Not thread-safe; open one per unit of work and close it.
 *
 * <p>Every method taking a document or stream id throws {@link IllegalArgumentException} for an id longer than
 * {@link IdLimits#MAX_ID_LENGTH}, before it queries anything.
 */
public interface QuerySession extends AutoCloseable {

    /** The tenant every read and write of this session is confined to. */
    String tenantId();

    /** Loads the document of {@code type} with {@code id}, or empty when there is none. */
    <T> Optional<T> load(Class<T> type, Object id);

    /** Loads every document of {@code type} whose id is in {@code ids}; missing ids are left out. */
    <T> List<T> loadMany(Class<T> type, Collection<?> ids);

    /** Starts a query over all documents of {@code type} in this tenant. */
    <T> DocumentQuery<T> query(Class<T> type);

    /**
     * Every live event of {@code streamId}, in stream version order; empty when the stream does not exist. Events
     * {@link EventOperations#archiveStream archived} are left out.
     */
    List<EventEnvelope> fetchStream(String streamId);

    /** {@link #fetchStream(String)}, with the stream's archived events when {@code includeArchived}. */
    List<EventEnvelope> fetchStream(String streamId, boolean includeArchived);

    /**
     * Every event of this session's tenant appended with {@code correlationId}, in sequence order, read through an
     * index on (tenant, correlation id).
     *
     * @throws IllegalArgumentException when {@code correlationId} is null, blank or longer than
     *                                  {@link IdLimits#MAX_ID_LENGTH}
     */
    List<EventEnvelope> fetchByCorrelationId(String correlationId);

    /** The stream's current version, metadata and archived mark, or empty when it does not exist. */
    Optional<StreamState> fetchStreamState(String streamId);

    /**
     * Folds the events of {@code streamId} on demand with the snapshot projection registered for {@code type} (the
     * one the daemon or inline projections use), storing nothing: empty when the stream does not exist or its
     * events delete the aggregate.
     *
     * @throws IllegalArgumentException naming {@code type} when no snapshot projection of it is registered
     */
    <T> Optional<T> aggregateStream(Class<T> type, String streamId);

    /** {@link #aggregateStream(Class, String)} over the events up to and including stream version {@code version}. */
    <T> Optional<T> aggregateStream(Class<T> type, String streamId, long version);

    /** {@link #aggregateStream(Class, String)} over the events appended at or before {@code asOf}. */
    <T> Optional<T> aggregateStream(Class<T> type, String streamId, Instant asOf);

    @Override
    void close();
}
