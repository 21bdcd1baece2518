package dev.ferret.runtime.daemon;

import dev.ferret.DatabaseException;
import dev.ferret.FerretException;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.RebuildProgress;
import dev.ferret.daemon.ShardState;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rebuild: the shards stop (REQUEST_STOP, DRAINED), their shadow tables and replay rows are emptied
 * ({@link ShadowReplay#prepare}), each is marked for a rebuild up to its mark (REBUILD) and started (START); it replays
 * into its shadows while queries read its live documents as they stood at the stop, and swaps the replay in when it
 * reaches its target (REBUILD_REACHED). The caller waits for every swap within its timeout, reported once a second; a
 * rebuild whose caller stopped waiting still ends, and one whose node stopped resumes at the shard's next start.
 */
final class Rebuild {

    private static final Logger LOG = LoggerFactory.getLogger(Rebuild.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final TimeSource time;
    private final ShardParts parts;
    private final ProgressionRows progression;
    private final ProgressBoard board;
    private final ShardRegistry registry;
    private final DaemonOperations operations;
    private final MarkRefresh marks;

    Rebuild(ShardParts parts, ShardRegistry registry, DaemonOperations operations, MarkRefresh marks) {
        this.context = parts.context();
        this.settings = parts.settings();
        this.time = parts.time();
        this.parts = parts;
        this.progression = parts.progression();
        this.board = parts.board();
        this.registry = registry;
        this.operations = operations;
        this.marks = marks;
    }

    void rebuild(String projectionName, Duration timeout, Consumer<RebuildProgress> progress) {
        List<ShardAgent> agents = registry.agentsNamed(projectionName);
        if (agents.isEmpty()) {
            // partitioned by tenant, and no tenant has appended yet: nothing to replay
            return;
        }
        rebuild(agents, agents.size() == 1 ? agents.get(0).name() : projectionName, timeout, progress);
    }

    void rebuild(String projectionName, String tenantId, Duration timeout,
                        Consumer<RebuildProgress> progress) {
        if (!context.partitionedByTenant()) {
            throw new IllegalArgumentException("rebuilding '" + projectionName + "' for tenant '" + tenantId
                    + "' alone needs tenant-partitioned events (events().partitionByTenant(true))");
        }
        String database = context.databases().of(tenantId).name();
        marks.refreshMark(timeout, candidate -> candidate.name().equals(database));
        List<ShardAgent> agents = registry.agentsNamed(projectionName).stream()
                .filter(a -> tenantId.equals(a.partition().tenantId())).toList();
        if (agents.isEmpty()) {
            throw new IllegalArgumentException("no shard of projection '" + projectionName + "' for tenant '"
                    + tenantId + "': the projection is unknown or the tenant has no events; known shards: "
                    + registry.known());
        }
        rebuild(agents, agents.get(0).name(), timeout, progress);
    }

    /**
     * Refuses a rebuild whose swap would replace documents another projection wrote: the swap replaces every row of
     * the tables the projection writes (a tenant's, for a tenant's shard) with the replay's, which holds none of theirs.
     */
    private void requireSoleWriter(ShardAgent agent) {
        for (DocumentMapping<?> mapping : agent.applier().documentMappings(context)) {
            if (mapping.writers().size() > 1) {
                throw new IllegalStateException("rebuild of " + agent.name() + " refused: its documents' table "
                        + mapping.table().name() + " is written by " + String.join(", ", mapping.writers())
                        + ", and the rebuild's swap would replace the other projections' documents there with none;"
                        + " give each projection document types of its own to rebuild it");
            }
        }
    }

    /**
     * Stops the agents, empties their shadows, replays each behind its live tables up to its mark, and returns when
     * every replay was swapped in; continuous processing then resumes.
     */
    private void rebuild(List<ShardAgent> agents, String label, Duration timeout, Consumer<RebuildProgress> progress) {
        agents.forEach(agent -> operations.requireHeldHere(agent, "rebuild"));
        agents.forEach(this::requireSoleWriter);
        long started = time.nanoTime();
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time);
        agents.forEach(ShardAgent::requestStop);
        agents.forEach(agent -> agent.awaitStop(deadline));
        Map<ShardAgent, Long> committedBefore = new LinkedHashMap<>();
        agents.forEach(agent -> committedBefore.put(agent, committedProgression(agent)));
        agents.forEach(this::prepareShadows);
        agents.forEach(ShardAgent::markRebuild);
        long highest = marks.refreshMark(timeout, database -> true);
        Map<ShardAgent, Long> targets = new LinkedHashMap<>();
        agents.forEach(agent -> targets.put(agent, agent.partition().perTenant() ? parts.marks().markOf(agent.partition()) : highest));
        targets.forEach((agent, target) -> agent.rebuildTo(target, committedBefore.get(agent)));
        long total = targets.values().stream().mapToLong(Long::longValue).sum();
        LOG.info("Rebuilding {} over {} sequence positions in {} shards", label, total, agents.size());
        agents.forEach(ShardAgent::start);
        long[] lastReport = {time.nanoTime()};
        Runnable report = () -> {
            long now = time.nanoTime();
            if (now - lastReport[0] >= TimeUnit.SECONDS.toNanos(1)) {
                lastReport[0] = now;
                RebuildProgress p = progressOf(label, targets, started);
                progress.accept(p);
                LOG.info("Rebuild of {}: {} of {} ({} events/s)", p.shardName(), p.eventsDone(), p.eventsTotal(),
                        Math.round(p.eventsPerSecond()));
            }
        };
        boolean done;
        try {
            done = board.await(() -> targets.keySet().stream().allMatch(agent -> !agent.rebuilding()
                            || agent.state() == ShardState.PAUSED),
                    timeout.minusNanos(time.nanoTime() - started), report);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while rebuilding " + label, e);
        }
        for (ShardAgent agent : agents) {
            if (agent.state() == ShardState.PAUSED) {
                throw new FerretException("rebuild of " + agent.name() + " paused at " + agent.floor()
                        + ": " + agent.error(), agent.error());
            }
        }
        if (!done) {
            Map<String, Long> lag = new LinkedHashMap<>();
            targets.forEach((agent, target) -> {
                if (agent.floor() < target) {
                    lag.put(agent.name(), target - Math.max(0, agent.floor()));
                }
            });
            RebuildProgress p = progressOf(label, targets, started);
            throw new NonStaleTimeoutException("rebuild of " + label + " reached " + p.eventsDone() + " of "
                    + p.eventsTotal() + " within " + timeout + "; it goes on in the background", lag);
        }
        progress.accept(progressOf(label, targets, started));
        LOG.info("Rebuild of {} finished: {} positions in {} ms", label, total,
                TimeUnit.NANOSECONDS.toMillis(time.nanoTime() - started));
        agents.forEach(ShardAgent::wake);
    }

    private RebuildProgress progressOf(String label, Map<ShardAgent, Long> targets, long startedNanos) {
        double seconds = Math.max(1e-3, (time.nanoTime() - startedNanos) / 1e9);
        long done = 0;
        long total = 0;
        for (Map.Entry<ShardAgent, Long> target : targets.entrySet()) {
            done += Math.min(target.getValue(), Math.max(0, target.getKey().floor()));
            total += target.getValue();
        }
        return new RebuildProgress(label, done, total, done / seconds);
    }

    /** The progression the shard's run committed before a rebuild: its pages' side effects exist up to there. */
    private long committedProgression(ShardAgent agent) {
        try {
            return progression.read(agent.partition().database().dataSource(), agent.name());
        } catch (SQLException e) {
            throw new DatabaseException("could not read the progression of " + agent.name() + " before its rebuild: "
                    + e.getMessage(), e);
        }
    }

    /** Empties the shard's shadow tables (its tenant's rows) and sets its replay's row to zero. */
    private void prepareShadows(ShardAgent agent) {
        try {
            context.transactions().inTransaction(agent.partition().database().dataSource(), c -> {
                agent.shadow().prepare(c, OffsetDateTime.now(context.clock()));
                return null;
            });
        } catch (SQLException e) {
            throw new DatabaseException("could not prepare the shadow tables of " + agent.name() + " for its rebuild: "
                    + e.getMessage(), e);
        }
    }
}
