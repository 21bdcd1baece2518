package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TimeSource;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One round of the daemon's supervisor, on the scheduler thread every polling interval: every loop that missed its
 * run is scheduled again, the budget's line is re-checked (a heap that recovered signals nobody), and the outbox
 * sweep runs when due. At most once per {@link #SHARD_PASS} the round also passes over every shard: one that should
 * run and has no run (its wake-up was refused, dropped or cancelled) is woken, and how long each has been behind is
 * tracked for liveness. No database work of its own. A shard whose healing fails is logged and the round goes on.
 *
 * <p>Its state (when the last pass ran) is the scheduler thread's.
 */
final class DaemonSupervisor implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(DaemonSupervisor.class);

    /**
     * The pass over every shard costs what reaching each one costs (at 46,200 shards and a round every 100 ms it took
     * two fifths of a busy node's CPU); what it heals, a lost run or a stalled shard's clock, can wait this long.
     */
    static final long SHARD_PASS = TimeUnit.SECONDS.toNanos(1);

    private final RearmingLoop polling;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    private final LoadBudget budget;
    private final ShardRegistry registry;
    private final OrphanedOutboxes orphans;
    private final TimeSource time;
    private boolean passed;
    private long lastPassNanos;

    DaemonSupervisor(RearmingLoop polling, ShardOwnership ownership, LoadBudget budget, ShardRegistry registry,
                     OrphanedOutboxes orphans, TimeSource time) {
        this.polling = polling;
        this.ownership = ownership;
        this.budget = budget;
        this.registry = registry;
        this.orphans = orphans;
        this.time = time;
    }

    @Override
    public void run() {
        polling.rearmIfOverdue();
        if (ownership != null) {
            ownership.rearmIfOverdue();
        }
        budget.recheck();
        long now = time.nanoTime();
        if (!passed || now - lastPassNanos >= SHARD_PASS) {
            passed = true;
            lastPassNanos = now;
            for (ShardAgent agent : registry.all()) {
                try {
                    agent.heal(now);
                } catch (RuntimeException e) {
                    LOG.warn("Healing shard {} failed: {}", agent.name(), e.toString());
                }
            }
        }
        orphans.due(now);
    }
}
