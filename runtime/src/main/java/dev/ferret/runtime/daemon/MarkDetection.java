package dev.ferret.runtime.daemon;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseException;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.daemon.hwm.HighWaterMarkDetector;
import dev.ferret.runtime.daemon.hwm.TenantMarks;
import dev.ferret.runtime.retry.Backoff;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Detection of the marks: the store's high water mark, or with tenant-partitioned events each database's tenant
 * marks (registering the shards of a tenant seen for the first time), and the agents woken whose mark moved.
 *
 * <p>Detection runs on the scheduler thread only, which owns the detector's and the tenants' state: the polling
 * loop runs {@link #detect} there, and a caller that needs the mark now ({@link #refreshMark}) submits to it and
 * waits within its timeout.
 */
final class MarkDetection implements MarkRefresh {

    private static final Logger LOG = LoggerFactory.getLogger(MarkDetection.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final ScheduledExecutorService scheduler;
    private final TimeSource time;
    private final LogMarks marks;
    private final HighWaterMarkDetector detector;
    private final ShardRegistry registry;
    private final Function<LogPartition, List<ShardAgent>> tenantAgents;
    private final Consumer<List<ShardAgent>> register;

    /** Tenants the detection leaves alone: being released. */
    private final Predicate<String> passBy;
    /** Tenants whose database the resolver could not name, reported once each; the scheduler thread's. */
    private final Set<String> unplaced = new HashSet<>();
    /**
     * The databases (or, for an event log that is not partitioned by tenant, {@link #EVENT_LOG}) whose last read
     * failed: when one is read again its shards look for committed pages it lost meanwhile ({@link LostPages}).
     * Scheduler thread only.
     */
    private final Set<String> unreachable = new HashSet<>();
    private final LostPagesSweep lostPages;
    private static final String EVENT_LOG = "";
    /** The polling loop's waits after failed reads; used by its runs only (one at a time). */
    private final Backoff.Attempts pollBackoff;
    private final ProgressBoard board;

    MarkDetection(ShardParts parts, ShardRegistry registry, Function<LogPartition, List<ShardAgent>> tenantAgents,
                  Consumer<List<ShardAgent>> register, Predicate<String> passBy) {
        this.passBy = passBy;
        this.context = parts.context();
        this.settings = parts.settings();
        this.scheduler = parts.scheduler();
        this.time = parts.time();
        this.marks = parts.marks();
        this.detector = marks.detector();
        this.registry = registry;
        this.tenantAgents = tenantAgents;
        this.register = register;
        this.board = parts.board();
        this.pollBackoff = new Backoff(settings.getPollingInterval(), settings.getMaxRetryBackoff()).attempts();
        this.lostPages = new LostPagesSweep(parts.progression());
    }

    /**
     * One run of the daemon's polling loop, on the scheduler thread: a detection of every database; returns the
     * delay before the next, shorter right after a move, backing off while reads fail. {@code afterRun} runs last,
     * whatever happened: the loop's partner re-armed in case it was the one that was lost.
     */
    Duration poll(Runnable afterRun) {
        try {
            boolean moved = detect(database -> true, false);
            pollBackoff.reset();
            if (moved) {
                board.changed();
            }
            // right after a move more events are likely on their way
            return moved ? settings.getPollingInterval().dividedBy(4) : settings.getPollingInterval();
        } catch (Exception e) {
            Duration next = pollBackoff.next();
            LOG.warn("High water mark detection failed; keeping mark {} and retrying in {}: {}", detector.mark(),
                    next, e.toString());
            return next;
        } finally {
            afterRun.run();
        }
    }

    HighWaterMarkDetector detector() {
        return detector;
    }

    /**
     * Runs a detection now, on the scheduler thread, and returns the highest committed sequence: what a reader who
     * just appended expects to see, even while the mark still waits at a hole below it.
     */
    @Override
    public long refreshHighest(Duration timeout, Predicate<TenantDatabases.Database> databases) {
        refreshMark(timeout, databases);
        return detector.status().highestSeen();
    }

    /**
     * One detection, on the scheduler thread: the store's mark, or with tenant-partitioned events the tenant marks
     * of the {@code databases} selected, registering agents for tenants seen for the first time. Wakes the agents
     * whose mark moved and returns whether any did. A database that cannot be read keeps its tenants' marks and
     * records its error; the others are read all the same. {@code strict}: the first such error is thrown at the end
     * (for a wait, which must not pass on a mark it could not read).
     */
    boolean detect(Predicate<TenantDatabases.Database> databases, boolean strict) throws SQLException {
        if (!context.partitionedByTenant()) {
            boolean moved;
            try {
                moved = detector.detect();
            } catch (SQLException | RuntimeException e) {
                unreachable.add(EVENT_LOG);
                throw e;
            }
            if (unreachable.remove(EVENT_LOG)) {
                sweepLostPages(database -> true);
            }
            if (moved) {
                registry.all().forEach(ShardAgent::wake);
            }
            return moved;
        }
        boolean moved = false;
        SQLException failed = null;
        for (TenantDatabases.Database database : context.databases().all()) {
            if (!databases.test(database)) {
                continue;
            }
            Map<String, Long> tenants;
            try {
                tenants = marks.of(database).refresh();
            } catch (SQLException e) {
                failed = failed == null ? e : failed;
                unreachable.add(database.name());
                continue;
            }
            if (unreachable.remove(database.name())) {
                sweepLostPages(database::equals);
            }
            for (String tenant : tenants.keySet()) {
                moved = true;
                Boolean holds = passBy.test(tenant) ? null : holds(database, tenant);
                if (holds == null) {
                    continue;
                }
                if (!holds) {
                    LOG.warn("Tenant {} has events in database {} but is mapped to database {}; its shards run"
                            + " where it is mapped", tenant, database.name(), context.databases().of(tenant).name());
                    continue;
                }
                List<ShardAgent> agents = tenantAgents.apply(new LogPartition(tenant, database));
                if (!registry.contains(agents.get(0).name())) {
                    register.accept(agents);
                    LOG.info("Tenant {} in database {}: {} shards", tenant, database.name(), agents.size());
                }
                for (ShardAgent agent : agents) {
                    ShardAgent registered = registry.get(agent.name());
                    if (registered != null) {
                        registered.wake();
                    }
                }
            }
        }
        if (failed != null && strict) {
            throw failed;
        }
        return moved;
    }

    /** The shards of the databases selected look for committed pages their database lost ({@link LostPages}). */
    private void sweepLostPages(Predicate<TenantDatabases.Database> databases) {
        Map<TenantDatabases.Database, List<ShardAgent>> byDatabase = new LinkedHashMap<>();
        for (ShardAgent agent : registry.all()) {
            TenantDatabases.Database database = agent.partition().database();
            if (databases.test(database)) {
                byDatabase.computeIfAbsent(database, d -> new ArrayList<>()).add(agent);
            }
        }
        byDatabase.forEach(lostPages::sweep);
    }

    /**
     * Whether {@code tenant} lives in {@code database}; null when the store cannot tell: a resolver that names a
     * database the store does not have leaves the tenant's shards unregistered (said once, loudly) rather than
     * failing every detection.
     */
    private Boolean holds(TenantDatabases.Database database, String tenant) {
        try {
            boolean holds = context.databases().holds(database, tenant);
            unplaced.remove(tenant);
            return holds;
        } catch (ConfigurationException e) {
            if (unplaced.add(tenant)) {
                LOG.error("Tenant {} has events in database {} but cannot be placed: {}; its shards do not run",
                        tenant, database.name(), e.getMessage());
            }
            return null;
        }
    }

    /** Runs a detection now of every database, on the scheduler thread, and returns the store's mark. */
    long refreshMark(Duration timeout) {
        return refreshMark(timeout, database -> true);
    }

    /**
     * Runs a detection now, on the scheduler thread, of the {@code databases} selected, and returns the store's mark.
     * A transient failure (a pooled connection the database ended, say) is tried again within the timeout.
     */
    @Override
    public long refreshMark(Duration timeout, Predicate<TenantDatabases.Database> databases) {
        long deadline = time.nanoTime() + timeout.toNanos();
        Throwable lastFailure = null;
        while (true) {
            long remaining = deadline - time.nanoTime();
            try {
                scheduler.submit(() -> {
                    detect(databases, true);
                    return null;
                }).get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
                return detector.mark();
            } catch (ExecutionException e) {
                Duration pause = settings.getPollingInterval();
                boolean timeLeft = deadline - time.nanoTime() >= pause.toNanos();
                if (!context.dialect().isTransientCause(e.getCause()) || !timeLeft) {
                    throw new DatabaseException("could not read the high water mark: " + e.getCause(), e.getCause());
                }
                lastFailure = e.getCause();
                sleep(pause);
            } catch (TimeoutException e) {
                // the last attempt ran out of time behind the scheduler: the failure before it is still the reason
                throw new NonStaleTimeoutException("could not read the high water mark within " + timeout
                        + (lastFailure == null ? "" : "; the last attempt failed: " + lastFailure), Map.of());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while reading the high water mark", e);
            }
        }
    }

    private void sleep(Duration pause) {
        try {
            time.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the high water mark", e);
        }
    }

    /**
     * With tenant-partitioned events there is no store-wide mark: the status sums the tenants' marks (the number
     * of committed events), each shard's status carrying its own tenant's mark.
     */
    HighWaterMarkStatus markStatus() {
        if (!context.partitionedByTenant()) {
            return detector.status();
        }
        long total = 0;
        boolean known = true;
        SQLException error = null;
        for (TenantMarks tenant : marks.tenants()) {
            known &= tenant.known();
            if (tenant.error() != null) {
                if (error == null) {
                    error = tenant.error();
                } else {
                    error.addSuppressed(tenant.error());
                }
            }
            for (long mark : tenant.marks().values()) {
                total += mark;
            }
        }
        return new HighWaterMarkStatus(total, total, known && error == null, error, Duration.ZERO,
                List.of());
    }
}
