package dev.ferret.runtime.daemon;

import dev.ferret.DatabaseException;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.RebuildProgress;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Projection;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.daemon.hwm.HighWaterMarkDetector;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator: owns the set of shard agents and the high water mark detector, polls on the scheduler, wakes
 * agents when the mark moves, and answers status, waits and rebuilds.
 *
 * <p>Connections: the detector holds at most one, each agent at most one and only while a page loads or writes,
 * and at most {@code workers} agents run at once; so the daemon uses at most {@code workers + 1} connections.
 */
public final class AsyncDaemon implements ProjectionDaemon {

    private static final Logger LOG = LoggerFactory.getLogger(AsyncDaemon.class);

    private final FerretDocumentStore store;
    private final DaemonSettings settings;
    private final DaemonExecutors executors;
    private final HighWaterMarkDetector detector;
    private final Map<String, ShardAgent> shards = new LinkedHashMap<>();
    private final List<AsyncListener> listeners;
    private final ProgressBoard board = new ProgressBoard();
    private final DaemonSql sql;
    private final TransientRetry.Factory retries;

    private volatile boolean running;
    private final LoadBudget budget;
    private final java.util.concurrent.Semaphore loads;
    private final java.util.concurrent.Semaphore writes;
    private final ShardOwnership ownership;
    private ScheduledFuture<?> nextPoll;
    private Duration pollBackoff;

    public AsyncDaemon(FerretDocumentStore store, DaemonSettings settings, List<ProjectionApplier> appliers,
                       List<AsyncListener> listeners, DaemonExecutors executors, TransientRetry.Factory retries) {
        this.store = store;
        this.retries = retries;
        this.settings = settings;
        this.executors = executors;
        this.listeners = List.copyOf(listeners);
        this.sql = store.dialect().daemonSql(store.names());
        this.detector = new HighWaterMarkDetector(store.dataSource(), store.dialect(), store.names(), settings,
                store.clock());
        for (ProjectionApplier applier : appliers) {
            String name = shardName(applier.name(), applier.version());
            shards.put(name, new ShardAgent(name, applier, this));
        }
        this.pollBackoff = settings.getPollingInterval();
        this.budget = new LoadBudget(settings.getTenantLoadBudget(), settings.getTenantLoadMemoryThreshold());
        this.loads = throttle(settings.getMaxConcurrentEventLoadsPerDatabase());
        this.writes = throttle(settings.getMaxConcurrentBatchWritesPerDatabase());
        this.ownership = settings.getMode() == DaemonMode.HOT_COLD && !shards.isEmpty()
                ? new ShardOwnership(this, List.copyOf(shards.values())) : null;
    }

    /** The database session holding this node's HotCold locks, or -1. */
    public long lockSessionId() {
        return ownership == null ? -1 : ownership.lockSessionId();
    }

    /** The shards this node runs under HotCold (every shard under SOLO). */
    public java.util.Set<String> ownedShards() {
        return ownership == null ? shards.keySet() : ownership.heldShards();
    }

    /** {@code <name>:All}, or {@code <name>:V<n>:All} above version 1. */
    public static String shardName(Projection projection) {
        return shardName(projection.name(), projection.version());
    }

    static String shardName(String name, int version) {
        return version == 1 ? name + ":All" : name + ":V" + version + ":All";
    }

    FerretDocumentStore store() {
        return store;
    }

    DaemonSettings settings() {
        return settings;
    }

    ExecutorService workers() {
        return executors.workers();
    }

    private static java.util.concurrent.Semaphore throttle(int permits) {
        return permits > 0 ? new java.util.concurrent.Semaphore(permits, true) : null;
    }

    LoadBudget budget() {
        return budget;
    }

    /** Bounds concurrent page loads (null: unbounded). */
    java.util.concurrent.Semaphore loadThrottle() {
        return loads;
    }

    /** Bounds concurrent page writes (null: unbounded). */
    java.util.concurrent.Semaphore writeThrottle() {
        return writes;
    }

    TransientRetry.Factory retries() {
        return retries;
    }

    ScheduledExecutorService scheduler() {
        return executors.scheduler();
    }

    ProgressBoard board() {
        return board;
    }

    List<AsyncListener> listeners() {
        return listeners;
    }

    long mark() {
        return detector.mark();
    }

    /** Whether the detector has read the log at least once since the daemon started. */
    boolean markKnown() {
        return detector.status().healthy();
    }

    /** Starts polling and every shard. */
    public synchronized void start() {
        if (running) {
            return;
        }
        try {
            detector.loadPersistedMark();
        } catch (SQLException e) {
            LOG.warn("Could not read the persisted high water mark; starting from the log", e);
        }
        running = true;
        if (ownership != null) {
            ownership.start();
        } else {
            shards.values().forEach(ShardAgent::start);
        }
        schedulePoll(Duration.ZERO);
        LOG.info("Async daemon started in {} mode with {} shards", settings.getMode(), shards.size());
    }

    private synchronized void schedulePoll(Duration delay) {
        if (running) {
            nextPoll = executors.scheduler().schedule(this::poll, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Runs on the scheduler thread only. */
    private void poll() {
        Duration next;
        try {
            boolean moved = detector.detect();
            pollBackoff = settings.getPollingInterval();
            if (moved) {
                shards.values().forEach(ShardAgent::wake);
                board.changed();
            }
            // right after a move more events are likely on their way
            next = moved ? settings.getPollingInterval().dividedBy(4) : settings.getPollingInterval();
        } catch (Throwable e) {
            LOG.warn("High water mark detection failed; keeping mark {} and retrying in {}: {}", detector.mark(),
                    pollBackoff, e.toString());
            next = pollBackoff;
            pollBackoff = pollBackoff.multipliedBy(2).compareTo(settings.getMaxRetryBackoff()) > 0
                    ? settings.getMaxRetryBackoff() : pollBackoff.multipliedBy(2);
        }
        schedulePoll(next);
    }

    /**
     * Runs a detection now, on the scheduler thread, and returns the highest committed sequence: what a reader who
     * just appended expects to see, even while the mark still waits at a hole below it.
     */
    long refreshHighest(Duration timeout) {
        refreshMark(timeout);
        return detector.status().highestSeen();
    }

    /** Runs a detection now, on the scheduler thread, and returns the mark. */
    long refreshMark(Duration timeout) {
        try {
            executors.scheduler().submit(() -> {
                detector.detect();
                shards.values().forEach(ShardAgent::wake);
                return null;
            }).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new DatabaseException("could not read the high water mark: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new NonStaleTimeoutException("could not read the high water mark within " + timeout, Map.of());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the high water mark", e);
        }
        return detector.mark();
    }

    /** Stops polling and every shard, and the executors when the daemon owns them. */
    public void stop() {
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
            if (nextPoll != null) {
                nextPoll.cancel(false);
            }
        }
        // every shard drains at once, so stopping many takes about one bound rather than one per shard
        requestStopAll();
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout());
        long cancelled = shards.values().stream().filter(agent -> !agent.awaitStop(deadline)).count();
        if (ownership != null) {
            ownership.stop();
        }
        board.changed();
        LOG.info("Async daemon stopped{}", cancelled == 0 ? "" : "; " + cancelled
                + " shards were cancelled at the drain bound and will re-process their page");
    }

    /** Asks every shard to stop after its page in flight; {@link #stop()} then waits for the drains. */
    void requestStopAll() {
        shards.values().forEach(ShardAgent::requestStop);
    }

    /** Stops, and shuts the executors down when the daemon owns them. */
    public void close() {
        stop();
        budget.close();
        if (executors.ownedByDaemon()) {
            executors.scheduler().shutdownNow();
            executors.workers().shutdown();
            try {
                if (!executors.workers().awaitTermination(settings.getStopAndDrainTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                    executors.workers().shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                executors.workers().shutdownNow();
            }
        }
    }

    @Override
    public DaemonStatus status() {
        List<ShardStatus> statuses = new ArrayList<>(shards.size());
        shards.values().forEach(agent -> statuses.add(agent.status()));
        return new DaemonStatus(settings.getMode(), running, detector.status(), statuses);
    }

    /** Waits for the shards {@code feeds} selects to reach the mark as it stands now. */
    public void waitForNonStale(Duration timeout, Predicate<ProjectionApplier> feeds) {
        if (!running) {
            throw new IllegalStateException("the async daemon is not running on this node (daemon mode "
                    + settings.getMode() + "); there is nothing to wait for");
        }
        long started = System.nanoTime();
        long target = refreshHighest(timeout);
        List<ShardAgent> watched = shards.values().stream().filter(a -> feeds.test(a.applier())).toList();
        Duration remaining = timeout.minusNanos(System.nanoTime() - started);
        boolean done;
        try {
            done = board.await(() -> watched.stream().allMatch(a -> progressOf(a) >= target), remaining, () -> { });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for non-stale projection data", e);
        }
        if (!done) {
            Map<String, Long> lag = new LinkedHashMap<>();
            StringBuilder message = new StringBuilder("projections did not reach the high water mark ")
                    .append(target).append(" within ").append(timeout).append(':');
            for (ShardAgent agent : watched) {
                long at = Math.max(0, progressOf(agent));
                if (at < target) {
                    long behind = target - at;
                    lag.put(agent.name(), behind);
                    message.append(' ').append(agent.name()).append(" at ").append(at)
                            .append(" (").append(behind).append(" behind, ").append(agent.state()).append(')');
                }
            }
            throw new NonStaleTimeoutException(message.toString(), lag);
        }
    }

    /** A shard's progression: its own when it runs here, else as another HotCold node committed it. */
    private long progressOf(ShardAgent agent) {
        if (ownership == null || agent.state() != ShardState.STOPPED) {
            return agent.floor();
        }
        try (java.sql.Connection c = store.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            ps.setString(1, agent.name());
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        } catch (SQLException e) {
            return -1;
        }
    }

    @Override
    public void rebuild(String projectionName, Duration timeout, Consumer<RebuildProgress> progress) {
        ShardAgent agent = agentFor(projectionName);
        long started = System.nanoTime();
        agent.stop(settings.getStopAndDrainTimeout());
        teardown(agent);
        agent.resetForRebuild(true);
        long target = refreshMark(timeout);
        LOG.info("Rebuilding {} over {} sequence positions", agent.name(), target);
        agent.start();
        long[] lastReport = {System.nanoTime()};
        Runnable report = () -> {
            long now = System.nanoTime();
            if (now - lastReport[0] >= TimeUnit.SECONDS.toNanos(1)) {
                lastReport[0] = now;
                RebuildProgress p = progressOf(agent, target, started);
                progress.accept(p);
                LOG.info("Rebuild of {}: {} of {} ({} events/s)", p.shardName(), p.eventsDone(), p.eventsTotal(),
                        Math.round(p.eventsPerSecond()));
            }
        };
        boolean done;
        try {
            done = board.await(() -> agent.floor() >= target || agent.state() == ShardState.PAUSED,
                    timeout.minusNanos(System.nanoTime() - started), report);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while rebuilding " + agent.name(), e);
        }
        if (agent.state() == ShardState.PAUSED) {
            throw new dev.ferret.FerretException("rebuild of " + agent.name() + " paused at " + agent.floor()
                    + ": " + agent.status().error(), agent.status().error());
        }
        if (!done) {
            throw new NonStaleTimeoutException("rebuild of " + agent.name() + " reached " + Math.max(0, agent.floor())
                    + " of " + target + " within " + timeout + "; it goes on in the background",
                    Map.of(agent.name(), target - Math.max(0, agent.floor())));
        }
        agent.resetForRebuild(false);
        progress.accept(progressOf(agent, target, started));
        LOG.info("Rebuild of {} finished: {} positions in {} ms", agent.name(), target,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        agent.wake();
    }

    private static RebuildProgress progressOf(ShardAgent agent, long target, long startedNanos) {
        double seconds = Math.max(1e-3, (System.nanoTime() - startedNanos) / 1e9);
        long done = Math.min(target, Math.max(0, agent.floor()));
        return new RebuildProgress(agent.name(), done, target, done / seconds);
    }

    private void teardown(ShardAgent agent) {
        try {
            store.transactions().inTransaction(store.dataSource(), c -> {
                try (Statement s = c.createStatement()) {
                    for (var mapping : agent.applier().documentMappings(store)) {
                        s.executeUpdate(mapping.sql().deleteAll());
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(sql.deleteProgression())) {
                    ps.setString(1, agent.name());
                    ps.executeUpdate();
                }
                return null;
            });
        } catch (SQLException e) {
            throw new DatabaseException("could not tear down " + agent.name() + " for its rebuild: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public void restart(String shardName) {
        ShardAgent agent = agentFor(shardName);
        agent.stop(settings.getStopAndDrainTimeout());
        if (running) {
            agent.start();
        }
    }

    private ShardAgent agentFor(String name) {
        ShardAgent agent = shards.get(name);
        if (agent == null) {
            agent = shards.values().stream().filter(a -> a.applier().name().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no async projection or shard named '" + name
                            + "'; known shards: " + shards.keySet()));
        }
        return agent;
    }
}
