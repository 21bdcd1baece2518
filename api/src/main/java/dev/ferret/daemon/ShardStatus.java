package dev.ferret.daemon;

/**
 * One shard as the daemon sees it.
 *
 * @param name          the shard's progression identity, such as {@code OrderSummary:All}
 * @param state         what it is doing
 * @param progression   the last sequence it committed
 * @param highWaterMark the mark it is working towards
 * @param error         why it is paused or retrying, else null
 */
public record ShardStatus(String name, ShardState state, long progression, long highWaterMark, Throwable error) {

    /** How many sequence numbers it is behind the mark. */
    public long lag() {
        return Math.max(0, highWaterMark - progression);
    }
}
