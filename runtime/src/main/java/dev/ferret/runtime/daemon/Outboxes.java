package dev.ferret.runtime.daemon;

import dev.ferret.daemon.OutboxStatus;
import dev.ferret.runtime.context.TenantDatabases;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's one {@link ShardOutbox} per shard name: the agent that runs a shard and the sweep of rows nobody runs
 * it for share it, so a shard's messages are delivered by one run at a time, in order, whoever asks. Instances live
 * as long as the store (one per shard name it ever met, as agents do).
 */
final class Outboxes {

    private static final Logger LOG = LoggerFactory.getLogger(Outboxes.class);

    private final Map<String, ShardOutbox> byShard = new ConcurrentHashMap<>();
    /**
     * SOLO: the shards that had undelivered rows when the daemon started, read once per database; null when not
     * read (HotCold, where another node may write a shard's rows until this one takes it, or a failed read).
     */
    private volatile Set<String> pendingAtStart;
    /** Shards whose outbox started once: any later start reads the table (a drain may have left rows). */
    private final Set<String> startedOnce = ConcurrentHashMap.newKeySet();

    /**
     * SOLO, as the daemon starts: reads which shards have undelivered rows, one statement per database, so that the
     * other shards' outboxes start without reading the table; a failed read leaves every outbox to read its own.
     */
    void readPendingAtStart(ShardParts parts) {
        Set<String> pending = new HashSet<>();
        try {
            for (TenantDatabases.Database database : parts.context().databases().all()) {
                pending.addAll(OrphanedOutboxes.pendingShards(parts, database));
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Could not read which outboxes have undelivered rows ({}); each shard reads its own", e.toString());
            return;
        }
        this.pendingAtStart = Set.copyOf(pending);
    }

    /** Whether {@code shard}'s outbox may hold rows as its agent starts now: true unless known otherwise. */
    boolean mayHaveRows(String shard) {
        Set<String> pending = pendingAtStart;
        return !startedOnce.add(shard) || pending == null || pending.contains(shard);
    }

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
