package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.runtime.projections.PageBatch;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What a page's transaction did once its work returned: the batch it applied, the change sets its after-commit
 * listeners get, the outbox rows it wrote by message id, whether it appended raised events, the events it applied
 * and how many dead letters it wrote. Returned by {@link PageWriter}; acted on once the commit is known.
 */
record PageOutcome(PageAttempt attempt, PageBatch batch, List<ChangeSet> changeSets, Map<UUID, Object> outboxWritten,
                   boolean appendedEvents, List<EventEnvelope> events, int deadLetters) {

    /**
     * The page's work returned and then its commit failed: the server may have committed and only the reply was
     * lost. Carries the outcome, so the page's post-commit work can run once its commit is read back.
     */
    static final class CommitUnknown extends SQLException {

        private final transient PageOutcome outcome;

        CommitUnknown(PageOutcome outcome, Throwable cause) {
            super("the commit of the page (" + outcome.attempt().floor() + ", " + outcome.attempt().end()
                    + "] failed: " + cause, cause);
            this.outcome = outcome;
        }

        PageOutcome outcome() {
            return outcome;
        }
    }
}
