package dev.ferret.runtime.daemon;

import dev.ferret.DatabaseException;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardPage;
import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.daemon.StatusSummary;
import dev.ferret.projections.Projection;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.daemon.hwm.HighWaterMarkDetector;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator: owns the set of shard agents and the high water mark detector, polls on the scheduler, wakes
 * agents when the mark moves, and answers status, waits and rebuilds.
 *
 * <p>Connections: the detector holds at most one, each agent at most one and only while a page loads or writes,
 * and at most {@code workers} agents run at once; a shard's outbox delivery runs on a worker too and holds one
 * while it delivers; so the daemon uses at most {@code workers + 1} connections.
 */
public final class AsyncDaemon extends OperatorVerbs {

    private static final Logger LOG = LoggerFactory.getLogger(AsyncDaemon.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final DaemonExecutors executors;
    /** Signals commits to other nodes and wakes this one on theirs; null where the engine cannot push. */
    private final CommitPush push;
    private final TimeSource time;
    private final List<ProjectionApplier> appliers;
    /** The detector's and the tenants' marks; detection runs on the scheduler thread only. */
    private final LogMarks marks;
    private final HighWaterMarkDetector detector;
    private final ProgressBoard board;
    private final DaemonSql sql;
    private final ProgressionRows progression;
    private final LoadBudget budget;
    /** What every agent is built from. */
    private final ShardParts parts;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    /** The sweep of outbox rows no agent here delivers. */
    private final OrphanedOutboxes orphans;
    /** The detector's loop; its last finished run is the daemon's heartbeat. */
    private final RearmingLoop polling;
    /** Re-arms every other loop and wakes shards whose wake-up was lost; re-armed itself by polling and status. */
    private final RearmingLoop supervisor;

    /** Every shard by name, added to by {@link #register}. */
    private final ShardRegistry registry;
    private final DaemonOperations operations;
    private final Rebuild rebuilds;
    private final NonStaleWait waits;
    /** Detection of the marks, on the scheduler thread. */
    private final MarkDetection detection;
    private final StatusSnapshots snapshots;
    private final TenantRelease release;
    private volatile boolean running;
    private final DaemonMetrics metrics;
    /** The gauges' registration while running; written under this monitor by start and stop. */
    private AutoCloseable observedByMetrics = () -> { };

    /**
     * Builds the daemon and its agents; nothing runs until {@link #start}.
     *
     * @param sessions the store's sessions, for raised events and after-commit listeners
     * @param time     every deadline, due time and elapsed duration the daemon computes
     * @param metrics  what the daemon and its agents report their work to
     * @param reads    where query sessions read each projection version's documents, for status and page sizes
     */
    public AsyncDaemon(StoreContext context, DaemonSettings settings, List<ProjectionApplier> appliers,
                       List<AsyncListener> listeners, DaemonExecutors executors, TransientRetry.Factory retries,
                       StoreSessions sessions, TimeSource time, DaemonMetrics metrics, ReadSwitches reads) {
        this.metrics = metrics;
        this.context = context;
        this.settings = settings;
        this.executors = executors;
        this.time = time;
        this.appliers = List.copyOf(appliers);
        this.sql = context.dialect().daemonSql(context.names());
        this.progression = new ProgressionRows(context.dialect(), sql);
        this.marks = new LogMarks(context, settings, sql);
        this.detector = marks.detector();
        this.board = new ProgressBoard(time);
        this.budget = new LoadBudget(settings.getTenantLoadBudget(),
                settings.getTenantLoadBudgetMegabytes() * 1024L * 1024L, settings.getTenantLoadMemoryThreshold());
        this.registry = new ShardRegistry(appliers);
        Duration grace = RearmingLoop.graceOn(settings);
        this.polling = new RearmingLoop("high water mark detection", executors.scheduler(),
                settings.getPollingInterval(), grace, time);
        this.supervisor = new RearmingLoop("daemon supervisor", executors.scheduler(), settings.getPollingInterval(),
                grace, time);
        RearmingLoop pollingLoop = polling;
        RearmingLoop supervisorLoop = supervisor;
        this.push = CommitPush.of(context, settings, executors, this::detectSoon);
        CommitPush pushing = push;
        Runnable rearmLoops = () -> {
            // raised events are new events: detected now, as an application's appends are, and on every node
            pollingLoop.runSoon();
            pollingLoop.rearmIfOverdue();
            supervisorLoop.rearmIfOverdue();
            if (pushing != null) {
                pushing.committed();
            }
        };
        this.parts = ShardParts.of(context, settings, sql, progression, executors, budget, board, listeners, retries,
                sessions, marks, time, rearmLoops, metrics, appliers.size(), reads);
        this.ownership = settings.getMode() == DaemonMode.HOT_COLD && !appliers.isEmpty()
                ? new ShardOwnership(parts) : null;
        this.orphans = new OrphanedOutboxes(parts, ownership == null
                ? OrphanedOutboxes.sweepingWhatNoAgentRuns(parts, registry::contains)
                : pending -> ownership.sweepRetired(pending, registry::retired));
        this.operations = new DaemonOperations(parts, registry, ownership, () -> running);
        this.release = new TenantRelease(parts, registry, ownership, this::detectSoon);
        this.detection = new MarkDetection(parts, registry, this::agentsFor, this::register, release::isReleasing);
        this.rebuilds = new Rebuild(parts, registry, operations, detection);
        this.waits = new NonStaleWait(parts, registry, ownership, detection, () -> running, this::heal);
        this.snapshots = new StatusSnapshots(settings, registry, ownership, detection, polling, parts);
        if (!context.partitionedByTenant()) {
            register(agentsFor(new LogPartition(null, context.databases().main())));
        }
    }

    /** One agent per projection for {@code partition}. */
    private List<ShardAgent> agentsFor(LogPartition partition) {
        List<ShardAgent> agents = new ArrayList<>(appliers.size());
        for (ProjectionApplier applier : appliers) {
            agents.add(new ShardAgent(partition.shardName(ShardNames.base(applier.name(), applier.version())), applier,
                    partition, parts));
        }
        return agents;
    }

    /** Adds agents; under HotCold they compete for their locks, else they start when the daemon runs. */
    private synchronized void register(List<ShardAgent> agents) {
        registry.add(agents);
        if (ownership != null) {
            ownership.add(agents);
        } else if (running) {
            agents.forEach(ShardAgent::start);
        }
    }

    /** The database session holding this node's HotCold locks, or -1. */
    public long lockSessionId() {
        return ownership == null ? -1 : ownership.lockSessionId();
    }

    /** Where this daemon's pages commit together; for tests. */
    SharedWrites sharedWrites() {
        return parts.writes();
    }

    @Override
    public String nodeName() {
        return ownership == null ? "solo" : ownership.nodeName();
    }

    /** Gone nodes linger until the clean-up removes their rows. */
    @Override
    public Map<String, Duration> nodes() {
        if (ownership == null) {
            return Map.of();
        }
        try {
            return ownership.nodes();
        } catch (SQLException e) {
            throw new DatabaseException("could not read the HotCold nodes' heartbeats: " + e.getMessage(), e);
        }
    }

    /** The shards this node runs under HotCold (every shard under SOLO). */
    public Set<String> ownedShards() {
        return ownership == null ? registry.names() : ownership.heldShards();
    }

    /** {@code <name>:All}, or {@code <name>:V<n>:All} above version 1. */
    public static String shardName(Projection projection) {
        return ShardNames.base(projection.name(), projection.version());
    }

    /**
     * The last sequence the shard of {@code projection} committed (for {@code tenantId} when events are partitioned
     * by tenant: the tenant's own numbering), read from the database now, since its agent may run on another node;
     * 0 when it has not committed yet.
     */
    public long committedThrough(Projection projection, String tenantId) throws SQLException {
        LogPartition partition = new LogPartition(context.partitionedByTenant() ? tenantId : null,
                context.databases().of(tenantId));
        return parts.progression().read(partition.database().dataSource(), partition.shardName(shardName(projection)));
    }

    /** The agent running shard {@code name}, or null; for tests that check an agent was not replaced. */
    Object agentOf(String name) {
        return registry.get(name);
    }

    /** The shared load budget; for tests that watch its line. */
    LoadBudget budget() {
        return budget;
    }

    /** Starts polling and every shard. */
    public synchronized void start() {
        if (running) {
            return;
        }
        if (!context.partitionedByTenant()) {
            try {
                detector.loadPersistedMark();
            } catch (SQLException e) {
                LOG.warn("Could not read the persisted high water mark; starting from the log", e);
            }
        }
        running = true;
        if (ownership != null) {
            ownership.start();
        } else {
            parts.outboxes().readPendingAtStart(parts);
            parts.startRows().read(context.databases().all(), parts.progression());
            registry.all().forEach(ShardAgent::start);
        }
        polling.start(() -> detection.poll(supervisor::rearmIfOverdue), Duration.ZERO);
        if (push != null) {
            push.start();
        }
        DaemonSupervisor rounds = new DaemonSupervisor(polling, ownership, budget, registry, orphans, time);
        supervisor.start(() -> {
            rounds.run();
            return settings.getPollingInterval();
        }, settings.getPollingInterval());
        observedByMetrics = metrics.observe(() -> snapshots.observed(running), settings.isMetricsPerShard());
        LOG.info("Async daemon started in {} mode with {}", settings.getMode(), context.partitionedByTenant()
                ? appliers.size() + " projections per tenant" : registry.size() + " shards");
    }

    /** Stops polling and every shard within one drain bound. */
    public void stop() {
        stop(ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time));
    }

    private void stop(long deadline) {
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
            try {
                observedByMetrics.close();
            } catch (Exception e) {
                LOG.warn("Could not unregister the daemon's gauges", e);
            }
        }
        supervisor.stop();
        polling.stop();
        if (push != null) {
            push.stop();
        }
        if (ownership != null) {
            // a stopping node takes no shard while its own drain, however long that takes
            ownership.halt();
        }
        // every shard drains at once, so stopping many takes about one bound rather than one per shard
        requestStopAll();
        long cancelled = registry.all().stream().filter(agent -> !agent.awaitStop(deadline)).count();
        parts.outboxes().drainSweeps(deadline);
        if (ownership != null) {
            ownership.stop(deadline);
        }
        board.changed();
        LOG.info("Async daemon stopped{}; since the start {}", cancelled == 0 ? "" : "; " + cancelled
                + " shards were cancelled at the drain bound and will re-process their page", parts.sharing());
    }

    /** Asks every shard to stop after its page in flight; {@link #stop()} then waits for the drains. */
    void requestStopAll() {
        registry.all().forEach(ShardAgent::requestStop);
    }

    /**
     * Stops, and shuts the executors down when the daemon owns them, all within the one drain bound: a page that
     * ignores both the interrupt and its aborted connection is left to end on its own thread, never waited for twice.
     */
    public void close() {
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time);
        stop(deadline);
        budget.close();
        if (executors.ownedByDaemon()) {
            executors.shutDown(deadline, time);
        }
    }

    /**
     * Events appended in this JVM have committed: the detector looks now instead of at its next poll, so they reach
     * the shards in milliseconds, and where the engine pushes the other nodes are told too ({@link CommitPush});
     * polling stays the backstop. A burst of appends coalesces into one detection. Also {@link #heal}s.
     */
    public void appended() {
        if (push != null) {
            push.committed();
        }
        detectSoon();
        heal();
    }

    /** Detects now rather than at the next poll (events committed here, or another node signalled its commit). */
    private void detectSoon() {
        if (running) {
            polling.runSoon();
        }
    }

    /** Whether this node listens for other nodes' commits now (false where the engine cannot push). */
    public boolean listeningForCommits() {
        return push != null && push.listening();
    }

    /**
     * Schedules again the detector's loop and the supervisor when a run of theirs was refused, dropped or cancelled.
     * Cheap (no database work): called after every append, by waits and by every status read, so that once the
     * container accepts work again the first of these revives a daemon whose every loop had been refused.
     */
    public void heal() {
        if (running) {
            polling.rearmIfOverdue();
            supervisor.rearmIfOverdue();
        }
    }

    @Override
    public Optional<ShardStatus> shard(String name) {
        return snapshots.shard(name);
    }

    @Override
    public ShardPage shards(ShardQuery query) {
        ShardPage page = snapshots.page(query);
        heal();
        return page;
    }

    @Override
    public StatusSummary summary() {
        StatusSummary summary = snapshots.summary();
        heal();
        return summary;
    }

    /**
     * The daemon's state. Reading it also re-arms the loops found overdue (after the snapshot is taken, so the
     * snapshot still tells that they were): a health probe revives a daemon whose own supervisor was lost too.
     */
    @Override
    public DaemonStatus status() {
        DaemonStatus status = snapshots.full(running);
        heal();
        return status;
    }

    @Override
    DaemonOperations operations() {
        return operations;
    }

    @Override
    Rebuild rebuilds() {
        return rebuilds;
    }

    @Override
    TenantRelease release() {
        return release;
    }

    @Override
    NonStaleWait waits() {
        return waits;
    }
}
