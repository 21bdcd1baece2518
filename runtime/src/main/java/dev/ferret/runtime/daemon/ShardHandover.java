package dev.ferret.runtime.daemon;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The drains of shards HotCold lets go of (given back to a joining node, or whose lock is gone), waited for off the
 * scheduler thread, so lock upkeep, heartbeats, the monitor and status reads go on while a page takes its drain
 * bound. A drain runs on the delivery threads when the daemon has them (in a container, the managed executor), else
 * on the workers; its end is reported back on the scheduler thread.
 *
 * <p>The scheduler thread owns the map of shards draining: {@link #drain}, {@link #isDraining} and the end callback
 * all run there, so a lock round never starts a shard that is still draining (its lifecycle would refuse START while
 * STOPPING) and never takes its lock again before the drain ends.
 */
final class ShardHandover {

    private static final Logger LOG = LoggerFactory.getLogger(ShardHandover.class);

    private final ScheduledExecutorService scheduler;
    private final Executor waiters;
    private final Map<String, ShardAgent> draining = new HashMap<>(); // owned by the scheduler thread

    ShardHandover(ScheduledExecutorService scheduler, Executor waiters) {
        this.scheduler = scheduler;
        this.waiters = waiters;
    }

    /** The waiters of a daemon: its delivery threads where it has them, else its workers. */
    static ShardHandover of(ShardParts parts) {
        DaemonExecutors executors = parts.executors();
        Executor waiters = executors.deliveries() != null ? executors.deliveries() : executors.workers();
        return new ShardHandover(executors.scheduler(), waiters);
    }

    /** Whether the shard under {@code lockName} is still draining; on the scheduler thread. */
    boolean isDraining(String lockName) {
        return draining.containsKey(lockName);
    }

    /**
     * On the scheduler thread, after the agent was asked to stop: waits for its drain until {@code deadlineNanos}
     * on a waiter, then runs {@code drained} on the scheduler thread. If no waiter takes it, the drain is waited for
     * here, as a last resort that keeps the lock from being released early.
     */
    void drain(String lockName, ShardAgent agent, long deadlineNanos, Runnable drained) {
        draining.put(lockName, agent);
        try {
            waiters.execute(() -> {
                try {
                    agent.awaitStop(deadlineNanos);
                } finally {
                    reportEnd(lockName, agent, drained);
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.warn("No thread took the drain of shard {}; the HotCold scheduler waits for it", agent.name());
            try {
                agent.awaitStop(deadlineNanos);
            } finally {
                ended(lockName, agent, drained);
            }
        }
    }

    private void reportEnd(String lockName, ShardAgent agent, Runnable drained) {
        try {
            scheduler.execute(() -> ended(lockName, agent, drained));
        } catch (RejectedExecutionException e) {
            // the node is stopping: its stop closes the lock session, which releases every lock
            LOG.debug("The scheduler is gone; the drain of shard {} ended with the node", agent.name());
        }
    }

    private void ended(String lockName, ShardAgent agent, Runnable drained) {
        if (draining.remove(lockName, agent)) {
            drained.run();
        }
    }

    /** The node stops: drains still waited for end with the agents' own stop; nothing is released here. */
    void clear() {
        draining.clear();
    }
}
