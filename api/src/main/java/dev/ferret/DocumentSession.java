package dev.ferret;

/**
 * A unit of work for one tenant: stores, deletes and event appends are buffered and written by
 * {@link #saveChanges()} in one database transaction, or not at all.
 *
 * <p>Ids are checked when a change is buffered: a document or stream id longer than {@link IdLimits#MAX_ID_LENGTH}
 * throws {@link IllegalArgumentException} at the call and buffers nothing of it.
 */
public interface DocumentSession extends QuerySession {

    /** Buffers an insert-or-replace of each document, keyed by its id. */
    void store(Object... documents);

    /** Buffers the deletion of the document of {@code type} with {@code id}. */
    void delete(Class<?> type, Object id);

    /** The event operations of this unit of work. */
    EventOperations events();

    /**
     * The metadata of the events this session appends from now on (events appended before keep theirs); what it
     * leaves unset comes from the store's {@link EventMetadataSource}, read when the session opened. An append made
     * through {@link EventOperations#withMetadata} adds its own over this.
     */
    void metadata(EventMetadata metadata);

    /** The metadata the next append gets unless it brings its own. */
    EventMetadata metadata();

    /**
     * The current state and version of {@code streamId}, to append to at that version: read from an inline snapshot
     * of {@code type} when one is registered (it is always current), folded from the stream's events otherwise.
     *
     * @throws IllegalArgumentException naming {@code type} when no snapshot projection of it is registered
     */
    <T> StreamForWriting<T> fetchForWriting(Class<T> type, String streamId);

    /**
     * Writes everything buffered in one transaction and clears the buffer.
     *
     * @throws ConcurrencyException when an expected stream version did not hold; nothing was written
     */
    void saveChanges();
}
