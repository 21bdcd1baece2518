package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ShardState;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.ProjectionApplier;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A wait for non-stale projection data: the mark is read now (the highest committed sequence, or a tenant's own
 * mark), each selected shard's target fixed from it, and the caller parked on the progress board until every shard
 * reached its target or the timeout ran out, which names each shard behind and by how much.
 */
final class NonStaleWait {

    private static final Logger LOG = LoggerFactory.getLogger(NonStaleWait.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final TimeSource time;
    private final ShardParts parts;
    private final ProgressionRows progression;
    private final ProgressBoard board;
    private final ShardRegistry registry;
    /** Null unless HotCold: a shard another node runs is read from its progression row. */
    private final ShardOwnership ownership;
    private final MarkRefresh marks;
    private final BooleanSupplier running;
    private final Runnable heal;

    NonStaleWait(ShardParts parts, ShardRegistry registry, ShardOwnership ownership, MarkRefresh marks,
                 BooleanSupplier running, Runnable heal) {
        this.context = parts.context();
        this.settings = parts.settings();
        this.time = parts.time();
        this.parts = parts;
        this.progression = parts.progression();
        this.board = parts.board();
        this.registry = registry;
        this.ownership = ownership;
        this.marks = marks;
        this.running = running;
        this.heal = heal;
    }

    /** Waits for the shards {@code feeds} selects to reach the mark as it stands now. */
    void await(Duration timeout, Predicate<ProjectionApplier> feeds) {
        await(timeout, feeds, null);
    }

    /**
     * Waits for the shards {@code feeds} selects to reach the mark as it stands now; with tenant-partitioned events
     * and a {@code tenantId}, only that tenant's shards.
     */
    void await(Duration timeout, Predicate<ProjectionApplier> feeds, String tenantId) {
        if (!running.getAsBoolean()) {
            throw new IllegalStateException("the async daemon is not running on this node (daemon mode "
                    + settings.getMode() + "); there is nothing to wait for");
        }
        long started = time.nanoTime();
        heal.run();
        // a tenant's wait depends on its own database only: another database's outage must not fail it
        TenantDatabases.Database own = tenantId != null && context.partitionedByTenant()
                ? context.databases().of(tenantId) : null;
        long highest = marks.refreshHighest(timeout, database -> own == null || database.name().equals(own.name()));
        // each shard's own target: the store's highest committed sequence, or its tenant's mark as just read
        Map<ShardAgent, Long> targets = new LinkedHashMap<>();
        registry.all().stream().filter(a -> feeds.test(a.applier()))
                .filter(a -> tenantId == null || !a.partition().perTenant() || tenantId.equals(a.partition().tenantId()))
                .forEach(a -> targets.put(a, a.partition().perTenant() ? parts.marks().markOf(a.partition()) : highest));
        Duration remaining = timeout.minusNanos(time.nanoTime() - started);
        boolean done;
        try {
            done = board.await(() -> targets.entrySet().stream().allMatch(t -> progressOf(t.getKey()) >= t.getValue()),
                    remaining, () -> { });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for non-stale projection data", e);
        }
        if (!done) {
            Map<String, Long> lag = new LinkedHashMap<>();
            StringBuilder message = new StringBuilder("projections did not reach the high water mark within ")
                    .append(timeout).append(':');
            targets.forEach((agent, target) -> {
                long at = Math.max(0, progressOf(agent));
                if (at < target) {
                    long behind = target - at;
                    lag.put(agent.name(), behind);
                    message.append(' ').append(agent.name()).append(" at ").append(at).append(" of ").append(target)
                            .append(" (").append(behind).append(" behind, ").append(agent.state()).append(')');
                }
            });
            throw new NonStaleTimeoutException(message.toString(), lag);
        }
    }

    /** A shard's progression: its own when it runs here, else as another HotCold node committed it. */
    private long progressOf(ShardAgent agent) {
        if (ownership == null || agent.state() != ShardState.STOPPED) {
            return agent.visibleFloor();
        }
        try {
            return progression.read(agent.partition().database().dataSource(), agent.name());
        } catch (SQLException e) {
            // a wait polls this again on the next change; below every target, it only keeps the wait waiting
            LOG.debug("Could not read the progression of shard {} run by another node; the wait re-reads it",
                    agent.name(), e);
            return -1;
        }
    }
}
