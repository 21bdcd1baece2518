package dev.ferret.daemon;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/** The async daemon of one store. Started and stopped with the store when its mode is not DISABLED. */
public interface ProjectionDaemon {

    /** Every shard and the daemon's loops; at many thousand shards prefer {@link #summary}, {@link #shards}, {@link #shard}. */
    DaemonStatus status();

    /** The shard named {@code name}; empty when there is none. The store's daemon finds it in constant time. */
    default Optional<ShardStatus> shard(String name) {
        return status().shard(name);
    }

    /**
     * A page of the shards {@code query} matches, ordered by name, with how many matched and their summary. The
     * store's daemon builds a full status only for the page's shards.
     */
    default ShardPage shards(ShardQuery query) {
        List<ShardStatus> all = new ArrayList<>(status().shards());
        all.sort(Comparator.comparing(ShardStatus::name));
        return ShardPage.of(all, query);
    }

    /** Every shard counted: by state, per projection and per database, with the worst lags. */
    default StatusSummary summary() {
        return status().summary();
    }

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

    /**
     * With tenant-partitioned events: takes every shard of {@code tenantId} out of this node's daemon (each finishes
     * its page in flight within {@code timeout}), runs {@code whileReleased}, then forgets the database the
     * tenant's resolver placed it in, so the next detection finds the tenant where it lives then and runs its shards
     * there from the progression it finds. No other shard stops. To move a tenant: stop its writers, release it with
     * a {@code whileReleased} that copies its rows (events, streams, documents, progression) to the new database and
     * makes the resolver answer that database; to remove one, delete its rows there. Under HotCold call it on every
     * node, since each runs the shards it holds.
     *
     * @return the names of the shards released
     * @throws IllegalArgumentException when events are not partitioned by tenant, or the tenant is being released
     * @throws NonStaleTimeoutException when a shard had not drained within {@code timeout} ({@code whileReleased}
     *                                  did not run)
     */
    List<String> releaseTenant(String tenantId, Duration timeout, Runnable whileReleased);

    /** Restarts a paused, held or stopped shard from its persisted progression. */
    void restart(String shardName);

    /**
     * An operator's pause: the shard finishes its page in flight (within the stop-and-drain bound) and stays
     * {@link ShardState#HELD} until {@link #restart}. Unlike a pause on an error, a held shard does not make the
     * daemon unhealthy. It holds on this node only: under HotCold, call it on the node that runs the shard.
     *
     * @throws IllegalArgumentException when no shard has that name
     */
    void hold(String shardName);

    /**
     * Restarts a shard that paused on an event its projection refused, sending that event to the dead letters if it
     * fails again (in the page that applies the events after it, whatever {@code skipApplyErrors} says), where it can
     * be replayed once the projection is fixed, or discarded.
     *
     * @return the sequence of the event skipped
     * @throws IllegalStateException when the shard is not paused on a refused event
     * @throws IllegalArgumentException when no shard has that name
     */
    long skipFailedEvent(String shardName);

    /** How many dead letters each shard has, by shard name; shards with none are absent. */
    Map<String, Long> deadLetterCounts();

    /**
     * A page of the dead letters of {@code shardName}, in the order they were written, after the one whose id is
     * {@code afterId} (0 for the first page); each carries its event's stored JSON.
     */
    List<DeadLetterEvent> deadLetters(String shardName, long afterId, int limit);

    /**
     * Deletes a dead letter: its event stays in the log and is not applied.
     *
     * @return whether it was there
     */
    boolean discardDeadLetter(String shardName, long deadLetterId);

    /**
     * Applies a dead letter's event to its projection again, in one transaction that also deletes the dead letter
     * (side effects included), with the shard's page loop held meanwhile; the progression does not move. An event
     * that fails again stays a dead letter and the failure is thrown. A snapshot projection whose stream moved on
     * since then gets the event applied over its current state: a rebuild is the exact remedy there.
     *
     * @throws ApplyFailedException when the projection refuses the event again
     * @throws IllegalStateException when the shard is rebuilding or runs on another node
     * @throws IllegalArgumentException when there is no such shard or dead letter
     */
    void replayDeadLetter(String shardName, long deadLetterId);

    /**
     * This node's name among the daemon's nodes: its HotCold heartbeat row, {@code solo} when the daemon runs every
     * shard alone. For operators: it is new at every start.
     */
    default String nodeName() {
        return "solo";
    }

    /**
     * Every HotCold node whose heartbeat row is in the database, this one included, with the time since its last
     * beat, read from the database now; empty under SOLO.
     */
    default Map<String, Duration> nodes() {
        return Map.of();
    }
}
