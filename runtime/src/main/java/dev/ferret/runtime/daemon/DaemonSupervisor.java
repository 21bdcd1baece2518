package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One round of the daemon's supervisor, on the scheduler thread every polling interval: every loop that missed its
 * run is scheduled again, the budget's line is re-checked (a heap that recovered signals nobody), every shard that
 * should run and has no run (its wake-up was refused, dropped or cancelled) is woken, and the outbox sweep runs when
 * due. Cheap: no database work of its own. A shard whose healing fails is logged and the round goes on.
 */
final class DaemonSupervisor implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(DaemonSupervisor.class);

    private final RearmingLoop polling;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    private final LoadBudget budget;
    private final ShardRegistry registry;
    private final OrphanedOutboxes orphans;
    private final TimeSource time;

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
        for (ShardAgent agent : registry.all()) {
            try {
                agent.heal(now);
            } catch (RuntimeException e) {
                LOG.warn("Healing shard {} failed: {}", agent.name(), e.toString());
            }
        }
        orphans.due(now);
    }
}
