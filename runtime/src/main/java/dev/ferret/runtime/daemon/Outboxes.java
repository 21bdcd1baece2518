package dev.ferret.runtime.daemon;

import dev.ferret.daemon.OutboxStatus;
import dev.ferret.runtime.context.TenantDatabases;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The store's one {@link ShardOutbox} per shard name: the agent that runs a shard and the sweep of rows nobody runs
 * it for share it, so a shard's messages are delivered by one run at a time, in order, whoever asks. Instances live
 * as long as the store (one per shard name it ever met, as agents do).
 */
final class Outboxes {

    private final Map<String, ShardOutbox> byShard = new ConcurrentHashMap<>();

    /** The outbox of {@code shard}, whose rows live in {@code database}. */
    ShardOutbox of(String shard, TenantDatabases.Database database, ShardParts parts) {
        return byShard.computeIfAbsent(shard, name -> new ShardOutbox(name, database, parts));
    }

    /** The outboxes sweeping rows no agent here runs. */
    List<ShardOutbox> sweeping() {
        List<ShardOutbox> sweeping = new ArrayList<>();
        byShard.values().forEach(outbox -> {
            if (outbox.sweeping()) {
                sweeping.add(outbox);
            }
        });
        return sweeping;
    }

    /** The sweeps in progress, as one outbox. */
    OutboxStatus sweptStatus() {
        List<OutboxStatus> swept = new ArrayList<>();
        sweeping().forEach(outbox -> swept.add(outbox.status()));
        return swept.isEmpty() ? OutboxStatus.EMPTY : OutboxStatus.sum(swept);
    }

    /** At a stop: every sweep delivers until {@code deadlineNanos} and ends. */
    void drainSweeps(long deadlineNanos) {
        List<ShardOutbox> sweeping = sweeping();
        sweeping.forEach(ShardOutbox::kick);
        sweeping.forEach(outbox -> outbox.drain(deadlineNanos));
    }
}
