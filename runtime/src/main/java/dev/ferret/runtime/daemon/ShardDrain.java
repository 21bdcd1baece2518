package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.daemon.ShardLifecycle.Event;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The drain of one shard after it was asked to stop: waits until the deadline for the page in flight to finish and
 * mark progression, then cancels it (its connection is aborted, so the statement stops and the transaction rolls
 * back, and the page is re-processed on the next start); a page that committed already keeps its after-commit
 * listeners. Then the shard leaves the budget's line, its outbox drains what the committed pages wrote (or stops,
 * when the lock is gone) and the lifecycle hears DRAINED. Stateless: the run it waits for is the lifecycle's, so two
 * callers may drain the same shard at once (a node's stop and a HotCold give-back) and the second finds it drained.
 */
final class ShardDrain {

    private static final Logger LOG = LoggerFactory.getLogger(ShardDrain.class);
    /** How long past the drain deadline a cancelled page may take to unwind before it is left alone. */
    static final Duration CANCEL_GRACE = Duration.ofMillis(250);

    private final String name;
    private final ShardLifecycle lifecycle;
    private final PageLoop pages;
    private final BudgetLine line;
    private final ShardOutbox outbox;
    private final ShardParts parts;
    private final TimeSource time;

    ShardDrain(String name, ShardLifecycle lifecycle, PageLoop pages, BudgetLine line, ShardOutbox outbox,
               ShardParts parts) {
        this.name = name;
        this.lifecycle = lifecycle;
        this.pages = pages;
        this.line = line;
        this.outbox = outbox;
        this.parts = parts;
        this.time = parts.time();
    }

    /**
     * Drains by {@code deadlineNanos} (a {@link TimeSource} reading; {@code Long.MAX_VALUE} for no bound), the
     * outbox too when {@code drainOutbox}. Returns whether the page loop ended in time.
     */
    boolean await(long deadlineNanos, boolean drainOutbox) {
        LoopRun running = lifecycle.run();
        boolean ended = true;
        if (running != null) {
            try {
                // cancelled before it started, or failed, it ended too: the run records its own failures
                if (!time.awaitDone(running, deadlineNanos)) {
                    ended = false;
                    cancelPageInFlight(running);
                    awaitUnwound(running, deadlineNanos);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ended = false;
                cancelPageInFlight(running);
            }
        }
        line.leave();
        if (drainOutbox) {
            outbox.drain(deadlineNanos);
        } else {
            outbox.stop();
        }
        lifecycle.fire(Event.DRAINED);
        parts.board().changed();
        return ended;
    }

    /**
     * After a cancel: a page that honours the interrupt or its aborted connection unwinds in moments (its
     * {@code finally} blocks give back its budget reservation and throttle slots); a page that does not is left to
     * end alone past {@link #CANCEL_GRACE} after the drain deadline.
     */
    private void awaitUnwound(LoopRun running, long deadlineNanos) {
        try {
            long until = deadlineNanos + CANCEL_GRACE.toNanos();
            if (!time.awaitDone(running.ended, until)) {
                LOG.warn("A cancelled page ignored its interrupt and its aborted connection; it is left to end alone");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void cancelPageInFlight(LoopRun running) {
        if (running.bodyStarted() && pages.pageCommitted()) {
            // only the after-commit listeners are left; the stop must not cut them off
            LOG.warn("Shard {} is still running after-commit listeners of a committed page past the drain bound", name);
            return;
        }
        running.cancelled = true;
        Connection connection = pages.pageConnection();
        if (connection != null) {
            try {
                connection.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                LOG.debug("Aborting the connection of shard {} failed", name, e);
            }
        }
        running.cancel(true);
        LOG.warn("Shard {} did not drain within the stop bound; its page in flight was cancelled and rolled back"
                + " and will be re-processed by the next owner", name);
    }
}
