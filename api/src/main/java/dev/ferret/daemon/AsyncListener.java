package dev.ferret.daemon;

import dev.ferret.QuerySession;
import dev.ferret.projections.DocumentOperations;

/**
 * Hooks on the commit boundary of each async daemon batch, one call per tenant touched. Suppressed during rebuilds:
 * a replay would fire them again for every historical batch.
 */
public interface AsyncListener {

    /**
     * Inside the batch's transaction, before it commits: at least once. A throw aborts the batch, which is retried
     * like any failed batch; writes through {@code operations} commit with it.
     */
    default void beforeCommit(DocumentOperations operations, ChangeSet changes) {
    }

    /**
     * After the batch committed: at most once, the place for cache invalidation. A throw is logged and swallowed;
     * the data is already durable and the batch is not reprocessed.
     */
    default void afterCommit(QuerySession session, ChangeSet changes) {
    }
}
