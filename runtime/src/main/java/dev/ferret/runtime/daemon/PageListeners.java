package dev.ferret.runtime.daemon;

import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.subscriptions.PostCommitListener;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one shard's listeners around its pages: the async listeners before the commit (inside the page's
 * transaction) and after it, and the subscriptions' post-commit listeners. A listener that fails after the commit
 * is logged: the page is durable, and re-processing it would fire its side effects again. Immutable; called only by
 * the shard's one loop run in flight.
 */
final class PageListeners {

    private static final Logger LOG = LoggerFactory.getLogger(PageListeners.class);

    private final String name;
    private final List<AsyncListener> listeners;
    private final StoreSessions sessions;

    PageListeners(String name, ShardParts parts) {
        this.name = name;
        this.listeners = parts.listeners();
        this.sessions = parts.sessions();
    }

    /**
     * The page's change sets, after the async listeners saw them before the commit (unless {@code silent}). Only
     * listeners read change sets: without any the page skips building them.
     */
    List<ChangeSet> beforeCommit(PageBatch batch, boolean silent) {
        List<ChangeSet> changeSets = listeners.isEmpty() ? List.of() : batch.changeSets(name);
        if (!silent) {
            for (AsyncListener listener : listeners) {
                for (ChangeSet changes : changeSets) {
                    listener.beforeCommit(batch.operations(changes.tenantId()), changes);
                }
            }
        }
        return changeSets;
    }

    /** Subscription listeners: once per committed page, never inside the retry of a failed one. */
    void postCommit(PageBatch committed) {
        for (PostCommitListener listener : committed.postCommitListeners()) {
            try {
                listener.afterCommit();
            } catch (Exception e) {
                LOG.error("Post-commit listener of shard {} failed; the page stays committed", name, e);
            }
        }
    }

    /** Async listeners after a commit, each change set's tenant in a query session of its own. */
    void afterCommit(List<ChangeSet> changeSets) {
        List<AsyncListener> listeners = this.listeners;
        if (listeners.isEmpty()) {
            return;
        }
        for (ChangeSet changes : changeSets) {
            try (var session = sessions.querySession(changes.tenantId())) {
                for (AsyncListener listener : listeners) {
                    try {
                        listener.afterCommit(session, changes);
                    } catch (RuntimeException e) {
                        // the batch is durable; reprocessing it would fire the side effect again
                        LOG.error("After-commit listener {} failed for shard {}; the batch stays committed",
                                listener.getClass().getName(), name, e);
                    }
                }
            }
        }
    }
}
