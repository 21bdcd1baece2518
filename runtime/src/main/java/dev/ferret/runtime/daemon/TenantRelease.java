package dev.ferret.runtime.daemon;

import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.runtime.context.TenantDatabases;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes one tenant's shards out of the daemon while the application moves or removes the tenant, and lets the
 * detection find it again afterwards, where its database now is. The shards are taken out on the scheduler thread,
 * which runs the detection that registers shards, so no registration of the tenant can slip in between; they drain on
 * the caller's thread within the drain bound; while the application's work runs the detection passes the tenant by.
 * Other tenants' shards are not touched.
 *
 * <p>The set of tenants being released is the one piece of shared state: written by the releasing callers, read by
 * the detection on the scheduler thread; a concurrent set.
 */
final class TenantRelease {

    private static final Logger LOG = LoggerFactory.getLogger(TenantRelease.class);

    private final ShardParts parts;
    private final ShardRegistry registry;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    private final Runnable detectSoon;
    private final Set<String> releasing = ConcurrentHashMap.newKeySet();

    TenantRelease(ShardParts parts, ShardRegistry registry, ShardOwnership ownership, Runnable detectSoon) {
        this.parts = parts;
        this.registry = registry;
        this.ownership = ownership;
        this.detectSoon = detectSoon;
    }

    /** Whether the detection must pass {@code tenantId} by: it is being released. */
    boolean isReleasing(String tenantId) {
        return releasing.contains(tenantId);
    }

    /**
     * Releases {@code tenantId}: its shards stop (each ends its page in flight within {@code timeout}) and leave the
     * daemon, then {@code whileReleased} runs, then the tenant's resolved database is forgotten and the detection
     * may register its shards again, in the database the tenant is found in then. Returns the shards released.
     *
     * @throws IllegalArgumentException when events are not partitioned by tenant, or the tenant is being released
     * @throws NonStaleTimeoutException when a shard had not drained within {@code timeout} (nothing else ran)
     */
    List<String> release(String tenantId, Duration timeout, Runnable whileReleased) {
        TenantDatabases databases = parts.context().databases();
        if (!parts.context().partitionedByTenant()) {
            throw new IllegalArgumentException("tenants are released one by one only with tenant-partitioned events"
                    + " (events().partitionByTenant(true))");
        }
        if (!releasing.add(tenantId)) {
            throw new IllegalArgumentException("tenant '" + tenantId + "' is being released already");
        }
        try {
            long deadline = ShardAgent.deadlineAfter(timeout, parts.time());
            List<ShardAgent> agents = onScheduler(() -> takeOut(tenantId), timeout);
            List<ShardAgent> stuck = agents.stream().filter(agent -> !agent.awaitStop(deadline)).toList();
            if (!stuck.isEmpty()) {
                throw new NonStaleTimeoutException("tenant '" + tenantId + "': " + stuck.size() + " of "
                        + agents.size() + " shards had not drained within " + timeout + "; they were cancelled and"
                        + " left the daemon; nothing else ran, call again to move the tenant", Map.of());
            }
            LOG.info("Released tenant {}: {} shards stopped and left the daemon", tenantId, agents.size());
            whileReleased.run();
            databases.forget(tenantId);
            return agents.stream().map(ShardAgent::name).toList();
        } finally {
            releasing.remove(tenantId);
            detectSoon.run();
        }
    }

    /** On the scheduler thread: the tenant's agents leave the registry (and the HotCold competition) and stop. */
    private List<ShardAgent> takeOut(String tenantId) {
        List<ShardAgent> agents = registry.all().stream()
                .filter(agent -> tenantId.equals(agent.partition().tenantId())).toList();
        registry.remove(agents);
        // found again later, maybe in another database: their rows are read then, not taken from the start's read
        agents.forEach(agent -> parts.startRows().forget(agent.name()));
        if (ownership != null) {
            ownership.remove(agents);
        } else {
            agents.forEach(ShardAgent::requestStop);
        }
        return agents;
    }

    private <T> T onScheduler(Callable<T> work, Duration timeout) {
        Future<T> done = parts.scheduler().submit(work);
        try {
            return done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while releasing a tenant", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            done.cancel(false);
            throw new NonStaleTimeoutException("the daemon's scheduler did not take the tenant's shards out within "
                    + timeout, Map.of());
        }
    }
}
