package dev.ferret.daemon;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A snapshot of the daemon.
 *
 * @param mode            the mode it runs in
 * @param running         whether it is started
 * @param highWaterMark   the detector's view
 * @param shards          every async shard, by name
 * @param heartbeatAge    time since the high water mark detector last finished a cycle (successful or not); zero
 *                        when the daemon is not running
 * @param livenessProblems why the daemon cannot heal by itself right now: the detector's loop has not finished a
 *                        cycle within its bound, a shard is stalled; empty when it is live
 */
public record DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                           List<ShardStatus> shards, Duration heartbeatAge, List<String> livenessProblems) {

    public DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                        List<ShardStatus> shards) {
        this(mode, running, highWaterMark, shards, Duration.ZERO, List.of());
    }

    public Optional<ShardStatus> shard(String name) {
        return shards.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /**
     * Healthy when the detector reads, the daemon is live, no shard is paused or retrying and no shard's outbox has
     * kept failing to deliver past its bound.
     */
    public boolean healthy() {
        return highWaterMark.healthy() && live() && shards.stream()
                .noneMatch(s -> s.state() == ShardState.PAUSED || s.state() == ShardState.RETRYING
                        || s.outbox() != null && s.outbox().stuck());
    }

    /**
     * Live when every loop of the daemon is turning and no shard is paused or stalled: what a liveness probe asks.
     * A shard retrying a lost database is live (it heals by itself); a paused one needs an operator.
     */
    public boolean live() {
        return livenessProblems.isEmpty() && shards.stream().noneMatch(s -> s.state() == ShardState.PAUSED);
    }
}
