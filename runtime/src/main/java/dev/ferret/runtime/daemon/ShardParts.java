package dev.ferret.runtime.daemon;

import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.DeadLetterSql;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.SnapshotCache;
import dev.ferret.runtime.retry.TransientRetry;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What every shard agent, its outbox and the HotCold ownership are built from: the store's context and the daemon's
 * shared pieces, each with its own owner (named in its class). Immutable; built once by the daemon before any agent.
 * An agent never sees the daemon: what it must tell the daemon goes through {@link #eventsRaised}.
 *
 * @param eventsRaised   called after a page appended raised events: re-arms the daemon's loops if one was lost
 * @param metrics        what the agents report their pages, retries and dead letters to
 * @param outboxes       the one outbox per shard name, shared by its agent and the store's sweep
 * @param snapshots      the snapshots every snapshot shard keeps between pages, bounded for the whole store
 * @param groups         the shards by projection and database, for the status summary
 * @param startRows      the progression rows a SOLO daemon read as it started, for its shards' first starts
 * @param loads          the pages of the log read lately, for the shards that read the same slice
 * @param writes         where pages of one database without side effects commit together
 * @param reads          where query sessions read each projection version's documents, for status
 */
record ShardParts(StoreContext context, DaemonSettings settings, DaemonSql sql, OutboxSql outboxSql,
                  DeadLetterSql deadLetterSql,
                  ProgressionRows progression, DaemonExecutors executors, LoadBudget budget, DatabaseLimits limits,
                  ProgressBoard board, List<AsyncListener> listeners, TransientRetry.Factory retries,
                  StoreSessions sessions, LogMarks marks, TimeSource time, Runnable eventsRaised,
                  DaemonMetrics metrics, Outboxes outboxes, SnapshotCache snapshots, ShardGroups groups,
                  ProgressionAtStart startRows, SharedLoads loads,
                  SharedWrites writes, ReadSwitches reads) {

    private static final long MIB = 1024L * 1024L;

    /**
     * The parts of a daemon of {@code projections} projections: the pieces the daemon keeps a hand on are given, the
     * ones only its agents share (limits, outboxes, caches, shared loads and writes) are made here from the settings.
     */
    static ShardParts of(StoreContext context, DaemonSettings settings, DaemonSql sql, ProgressionRows progression,
                         DaemonExecutors executors, LoadBudget budget, ProgressBoard board, List<AsyncListener> listeners,
                         TransientRetry.Factory retries, StoreSessions sessions, LogMarks marks, TimeSource time,
                         Runnable eventsRaised, DaemonMetrics metrics, int projections, ReadSwitches reads) {
        DatabaseLimits limits = new DatabaseLimits(context.databases(), settings, time);
        return new ShardParts(context, settings, sql, context.dialect().outboxSql(context.names()),
                context.dialect().deadLetterSql(context.names()), progression, executors, budget, limits, board,
                List.copyOf(listeners), retries, sessions, marks, time, eventsRaised, metrics, new Outboxes(),
                new SnapshotCache(settings.getDocumentCacheMegabytes() * MIB), new ShardGroups(),
                new ProgressionAtStart(), SharedLoads.of(settings.getSharedLoadMegabytes() * MIB, projections),
                SharedWrites.of(context.transactions(), limits, settings.isSharedTransactions(),
                        context.partitionedByTenant(), projections), reads);
    }

    /** What the shards shared since the start, for the daemon's stop line. */
    String sharing() {
        return loads.loads() + " pages were read and " + loads.shared() + " taken from another shard's read, "
                + writes.grouped() + " pages committed in " + writes.groups() + " shared transactions";
    }

    ExecutorService workers() {
        return executors.workers();
    }

    ScheduledExecutorService scheduler() {
        return executors.scheduler();
    }
}
