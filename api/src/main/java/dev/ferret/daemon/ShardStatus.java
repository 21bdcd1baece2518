package dev.ferret.daemon;

import dev.ferret.StoreOptions;
import java.time.Duration;

/**
 * One shard as the daemon sees it.
 *
 * @param name            the shard's progression identity, such as {@code OrderSummary:All}
 * @param state           what it is doing
 * @param progression     the last sequence it committed
 * @param highWaterMark   the mark it is working towards
 * @param error           why it is paused or retrying, else null
 * @param sinceLastCommit time since this node last committed a page of the shard; null when it has not since the
 *                        shard started here
 * @param stalledFor      how long the shard has been behind its mark without committing while it should run; zero
 *                        when it is caught up, moving, stopped or paused
 * @param outbox          its side-effect messages waiting for delivery
 * @param projection      the name of the projection (or subscription) it runs, such as {@code OrderSummary}
 * @param tenantId        the tenant whose events it reads when events are partitioned by tenant, else null
 * @param runsHere        whether this node runs it: always under SOLO, while it holds the shard's lock under HotCold
 * @param database        the name of the database whose event log it reads: {@code StoreOptions.DEFAULT_DATABASE}
 *                        for the store's own, else the name given in {@code tenancy().database(...)}
 * @param servesReads     whether this node's query sessions read its documents from the tables this shard writes:
 *                        false for a new projection version whose reads still go to the prior version's tables
 *                        (until it has caught up with the prior version, per tenant), and for that prior version's
 *                        shard once they switched; true for every other shard
 */
public record ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                          Duration sinceLastCommit, Duration stalledFor, OutboxStatus outbox, String projection,
                          String tenantId, boolean runsHere, String database, boolean servesReads) {

    /** A shard that serves reads of its documents. */
    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                       Duration sinceLastCommit, Duration stalledFor, OutboxStatus outbox, String projection,
                       String tenantId, boolean runsHere, String database) {
        this(name, state, progression, highWaterMark, error, sinceLastCommit, stalledFor, outbox, projection,
                tenantId, runsHere, database, true);
    }

    /** A shard of the store's own database. */
    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                       Duration sinceLastCommit, Duration stalledFor, OutboxStatus outbox, String projection,
                       String tenantId, boolean runsHere) {
        this(name, state, progression, highWaterMark, error, sinceLastCommit, stalledFor, outbox, projection,
                tenantId, runsHere, StoreOptions.DEFAULT_DATABASE);
    }

    /** A shard of the whole log that runs on this node, its projection read from its name. */
    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                       Duration sinceLastCommit, Duration stalledFor, OutboxStatus outbox) {
        this(name, state, progression, highWaterMark, error, sinceLastCommit, stalledFor, outbox,
                projectionOf(name), null, true);
    }

    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                       Duration sinceLastCommit, Duration stalledFor) {
        this(name, state, progression, highWaterMark, error, sinceLastCommit, stalledFor, OutboxStatus.EMPTY);
    }

    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error) {
        this(name, state, progression, highWaterMark, error, null, Duration.ZERO, OutboxStatus.EMPTY);
    }

    /** The projection part of a shard name: what comes before its first {@code :}. */
    private static String projectionOf(String shardName) {
        int colon = shardName.indexOf(':');
        return colon < 0 ? shardName : shardName.substring(0, colon);
    }

    /** How many sequence numbers it is behind the mark. */
    public long lag() {
        return Math.max(0, highWaterMark - progression);
    }
}
