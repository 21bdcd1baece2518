package dev.ferret.projections;

/**
 * Where a projection raises side effects while it applies a page. Both are written in the page's transaction:
 * events are appended there (exactly once, with the page), messages go to the durable outbox, from which the store's
 * side-effect publisher receives them after the commit (at least once, in order per shard). Side effects are not
 * written during rebuilds nor during a gated version's warm-up.
 */
public interface SideEffects {

    /**
     * A message for {@code options.projections().publishPayloads(...)}; stored as JSON of its class until
     * delivered, so it must be JSON-B serializable.
     */
    void publish(Object message);

    /** An event to append to {@code streamId}, for the tenant of the event being applied. */
    void appendEvent(String streamId, Object event);

    /**
     * Archives {@code streamId} of the tenant of the event being applied, in the page's transaction (exactly once,
     * with the page), as {@code events().archiveStream} does: for example when the event closes the stream. Its
     * events move to the archive before the page's raised events are appended, and a {@code StreamArchived} event
     * follows. The stream must exist: archiving one that does not fails the page.
     */
    void archiveStream(String streamId);
}
