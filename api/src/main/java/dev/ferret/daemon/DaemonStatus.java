package dev.ferret.daemon;

import java.util.List;
import java.util.Optional;

/**
 * A snapshot of the daemon.
 *
 * @param mode          the mode it runs in
 * @param running       whether it is started
 * @param highWaterMark the detector's view
 * @param shards        every async shard, by name
 */
public record DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                           List<ShardStatus> shards) {

    public Optional<ShardStatus> shard(String name) {
        return shards.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** Healthy when the detector reads and no shard is paused or retrying. */
    public boolean healthy() {
        return highWaterMark.healthy() && shards.stream()
                .noneMatch(s -> s.state() == ShardState.PAUSED || s.state() == ShardState.RETRYING);
    }
}
