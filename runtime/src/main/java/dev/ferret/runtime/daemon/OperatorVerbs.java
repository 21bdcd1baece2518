package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.RebuildProgress;
import dev.ferret.runtime.projections.ProjectionApplier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The verbs of the daemon's API that act on its shards, each handed to what does it: {@link DaemonOperations} for one
 * shard's restart, hold, skip and dead letters, {@link Rebuild} for rebuilds, {@link TenantRelease} for a tenant's
 * release, {@link NonStaleWait} for waits. Kept apart from {@link AsyncDaemon}, which builds and owns those and the
 * daemon's own life (start, stop, status).
 */
abstract class OperatorVerbs implements ProjectionDaemon {

    abstract DaemonOperations operations();

    abstract Rebuild rebuilds();

    abstract TenantRelease release();

    abstract NonStaleWait waits();

    /** Waits for the shards {@code feeds} selects to reach the mark as it stands now. */
    public void waitForNonStale(Duration timeout, Predicate<ProjectionApplier> feeds) {
        waits().await(timeout, feeds, null);
    }

    /**
     * Waits for the shards {@code feeds} selects to reach the mark as it stands now; with tenant-partitioned events
     * and a {@code tenantId}, only that tenant's shards.
     */
    public void waitForNonStale(Duration timeout, Predicate<ProjectionApplier> feeds, String tenantId) {
        waits().await(timeout, feeds, tenantId);
    }

    @Override
    public List<String> releaseTenant(String tenantId, Duration timeout, Runnable whileReleased) {
        return release().release(tenantId, timeout, whileReleased);
    }

    @Override
    public void rebuild(String projectionName, Duration timeout, Consumer<RebuildProgress> progress) {
        rebuilds().rebuild(projectionName, timeout, progress);
    }

    @Override
    public void rebuild(String projectionName, String tenantId, Duration timeout,
                        Consumer<RebuildProgress> progress) {
        rebuilds().rebuild(projectionName, tenantId, timeout, progress);
    }

    @Override
    public void restart(String shardName) {
        operations().restart(shardName);
    }

    @Override
    public void hold(String shardName) {
        operations().hold(shardName);
    }

    @Override
    public long skipFailedEvent(String shardName) {
        return operations().skipFailedEvent(shardName);
    }

    @Override
    public Map<String, Long> deadLetterCounts() {
        return operations().deadLetterCounts();
    }

    @Override
    public List<DeadLetterEvent> deadLetters(String shardName, long afterId, int limit) {
        return operations().deadLetters(shardName, afterId, limit);
    }

    @Override
    public boolean discardDeadLetter(String shardName, long deadLetterId) {
        return operations().discardDeadLetter(shardName, deadLetterId);
    }

    @Override
    public void replayDeadLetter(String shardName, long deadLetterId) {
        operations().replayDeadLetter(shardName, deadLetterId);
    }
}
