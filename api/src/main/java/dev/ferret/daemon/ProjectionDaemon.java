package dev.ferret.daemon;

import java.time.Duration;
import java.util.function.Consumer;

/** The async daemon of one store. Started and stopped with the store when its mode is not DISABLED. */
public interface ProjectionDaemon {

    DaemonStatus status();

    /**
     * Stops the shard of {@code projectionName}, deletes its documents and progression, replays every event and
     * returns when it has caught up with the high water mark as it stood at the start; continuous processing then
     * resumes.
     *
     * @throws NonStaleTimeoutException when the replay did not finish within {@code timeout} (it goes on)
     */
    void rebuild(String projectionName, Duration timeout, Consumer<RebuildProgress> progress);

    default void rebuild(String projectionName, Duration timeout) {
        rebuild(projectionName, timeout, p -> { });
    }

    /**
     * With tenant-partitioned events: rebuilds {@code projectionName} for {@code tenantId} alone, deleting only that
     * tenant's documents and progression, while every other tenant's shard keeps running.
     *
     * @throws IllegalArgumentException when events are not partitioned by tenant, or the tenant has no events
     * @throws NonStaleTimeoutException when the replay did not finish within {@code timeout} (it goes on)
     */
    void rebuild(String projectionName, String tenantId, Duration timeout, Consumer<RebuildProgress> progress);

    /** Restarts a paused or stopped shard from its persisted progression. */
    void restart(String shardName);
}
