package dev.ferret.daemon;

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
 */
public record ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                          Duration sinceLastCommit, Duration stalledFor, OutboxStatus outbox) {

    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error,
                       Duration sinceLastCommit, Duration stalledFor) {
        this(name, state, progression, highWaterMark, error, sinceLastCommit, stalledFor, OutboxStatus.EMPTY);
    }

    public ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error) {
        this(name, state, progression, highWaterMark, error, null, Duration.ZERO, OutboxStatus.EMPTY);
    }

    /** How many sequence numbers it is behind the mark. */
    public long lag() {
        return Math.max(0, highWaterMark - progression);
    }
}
