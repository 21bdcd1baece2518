package dev.ferret.daemon;

import java.time.Duration;
import java.util.ArrayList;
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
 * @param sweptOutboxes   the outbox rows this node delivers for shards no agent here runs (a retired version, a
 *                        tenant's shard not started since a restart), summed; {@link OutboxStatus#EMPTY} when none
 */
public record DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                           List<ShardStatus> shards, Duration heartbeatAge, List<String> livenessProblems,
                           OutboxStatus sweptOutboxes) {

    public DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                        List<ShardStatus> shards, Duration heartbeatAge, List<String> livenessProblems) {
        this(mode, running, highWaterMark, shards, heartbeatAge, livenessProblems, OutboxStatus.EMPTY);
    }

    public DaemonStatus(DaemonMode mode, boolean running, HighWaterMarkStatus highWaterMark,
                        List<ShardStatus> shards) {
        this(mode, running, highWaterMark, shards, Duration.ZERO, List.of());
    }

    /** The store's whole outbox as this node sees it: every shard's here plus the swept ones. */
    public OutboxStatus outbox() {
        List<OutboxStatus> all = new ArrayList<>();
        shards.forEach(shard -> {
            if (shard.outbox() != null) {
                all.add(shard.outbox());
            }
        });
        all.add(sweptOutboxes);
        return OutboxStatus.sum(all);
    }

    /** How many shards are in each state, and per projection the same and its worst lag: the first look at many. */
    public StatusSummary summary() {
        return StatusSummary.of(shards);
    }

    public Optional<ShardStatus> shard(String name) {
        return shards.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /**
     * Healthy when the daemon is {@link #live()} and has no {@link #problems()}: the detector reads, no shard is
     * paused or retrying and no shard's outbox has kept failing to deliver past its bound.
     */
    public boolean healthy() {
        return live() && problems().isEmpty();
    }

    /**
     * Live when every loop of the daemon is turning and no page is stuck past its bound: what a liveness probe asks,
     * "would a restart help?". A paused shard, a shard retrying a lost database, a database outage or an outbox
     * backlog leave it live: a new process would pause at the same event or wait for the same database. Those are
     * {@link #problems() health problems}, for operators and alerts.
     */
    public boolean live() {
        return livenessProblems.isEmpty();
    }

    /**
     * Why the daemon is not {@link #healthy()} although a restart would not help, one line each, naming shards and
     * counts only (never event data, stream ids or error messages): shards paused on an error, shards retrying,
     * outboxes that keep failing, a high water mark that cannot be read.
     */
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        if (!highWaterMark.healthy()) {
            problems.add("the high water mark cannot be read"
                    + (highWaterMark.error() == null ? "" : " (" + highWaterMark.error().getClass().getSimpleName()
                    + ")"));
        }
        for (ShardStatus shard : shards) {
            if (shard.state() == ShardState.PAUSED) {
                problems.add("shard " + shard.name() + " is paused at " + shard.progression()
                        + (shard.error() == null ? "" : " (" + shard.error().getClass().getSimpleName() + ")")
                        + "; restart, skip or fix and redeploy");
            } else if (shard.state() == ShardState.RETRYING) {
                problems.add("shard " + shard.name() + " is retrying a transient failure at " + shard.progression());
            }
            if (shard.outbox() != null && shard.outbox().stuck()) {
                problems.add("the outbox of shard " + shard.name() + " has " + shard.outbox().undelivered()
                        + " messages waiting, the oldest for " + shard.outbox().oldestUndelivered().toMillis()
                        + " ms: past the stalled-shard threshold");
            }
        }
        if (sweptOutboxes.stuck()) {
            problems.add("the outbox rows of shards no agent here runs have " + sweptOutboxes.undelivered()
                    + " messages waiting, the oldest for " + sweptOutboxes.oldestUndelivered().toMillis()
                    + " ms: past the stalled-shard threshold");
        }
        return problems;
    }
}
