package dev.ferret.daemon;

import java.time.Duration;
import java.util.Collection;

/**
 * A shard's side-effect outbox as this node's dispatcher last saw it.
 *
 * @param undelivered      messages committed and not yet delivered (as of the dispatcher's last pass)
 * @param oldestUndelivered age of the oldest of them; zero when there is none
 * @param lastError        why the last delivery failed; null when the last one succeeded
 * @param stuck            whether deliveries have kept failing, or the oldest undelivered message has waited, for
 *                         longer than the stalled-shard threshold: the daemon is then not healthy (projection
 *                         progress goes on regardless)
 */
public record OutboxStatus(long undelivered, Duration oldestUndelivered, String lastError, boolean stuck) {

    /** An outbox with nothing waiting. */
    public static final OutboxStatus EMPTY = new OutboxStatus(0, Duration.ZERO, null, false);

    /** Several outboxes as one: messages summed, the oldest age, the first error, stuck when any is. */
    public static OutboxStatus sum(Collection<OutboxStatus> outboxes) {
        long undelivered = 0;
        Duration oldest = Duration.ZERO;
        String error = null;
        boolean stuck = false;
        for (OutboxStatus outbox : outboxes) {
            undelivered += outbox.undelivered();
            if (outbox.oldestUndelivered().compareTo(oldest) > 0) {
                oldest = outbox.oldestUndelivered();
            }
            if (error == null) {
                error = outbox.lastError();
            }
            stuck |= outbox.stuck();
        }
        return new OutboxStatus(undelivered, oldest, error, stuck);
    }
}
