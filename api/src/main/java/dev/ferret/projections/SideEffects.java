package dev.ferret.projections;

/**
 * Where a projection raises side effects while it applies a page. Nothing happens until the page's transaction
 * commits; then messages go to the store's side-effect publisher and events are appended in a unit of work of their
 * own. Side effects are held back during rebuilds and during a gated version's warm-up.
 */
public interface SideEffects {

    /** A message for {@code options.projections().sideEffectPublisher(...)}. */
    void publish(Object message);

    /** An event to append to {@code streamId}, for the tenant of the event being applied. */
    void appendEvent(String streamId, Object event);
}
