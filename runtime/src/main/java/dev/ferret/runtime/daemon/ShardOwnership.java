package dev.ferret.runtime.daemon;

import dev.ferret.ConfigurationException;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.dialect.AdvisoryLockKeys;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.ShardLockSession;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HotCold: which shards this node runs. Every node competes for a session-scoped database lock per shard; the
 * holder runs the shard, the others keep trying every {@code lockAcquireInterval}. A node takes at most
 * {@code ceil(shards / live nodes)} shards, live nodes being those whose heartbeat row is fresh, and gives back
 * shards above that share when a node joins, so shards spread and move when a node leaves. The lock monitor asks
 * the database every {@code monitoringInterval} which locks the session still holds and stops (with the drain
 * bound) every shard whose lock is gone; a lost lock connection is replaced and the node competes again.
 *
 * <p>Everything here runs on the daemon's single scheduler thread, which owns the lock session and the held map;
 * page work and drains never run there ({@link ShardHandover} waits for a drain elsewhere), so lock upkeep never
 * waits behind a page.
 */
final class ShardOwnership {

    private static final Logger LOG = LoggerFactory.getLogger(ShardOwnership.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final ScheduledExecutorService scheduler;
    private final TimeSource time;
    private final NodeHeartbeats nodes;
    private final Map<String, ShardAgent> lockNames = new LinkedHashMap<>();
    private final Map<String, ShardAgent> held = new LinkedHashMap<>();
    /** Locks of retired shards whose outbox this node sweeps, by lock name; released when the sweep ends. */
    private final Map<String, ShardOutbox> sweepLocks = new LinkedHashMap<>();
    /** Advisory lock key to lock name, so a collision is refused when a shard is added. */
    private final Map<Long, String> lockKeys = new HashMap<>();
    private final RearmingLoop acquiring;
    private final RearmingLoop monitoring;
    private final ShardHandover handover;

    private ShardLockSession locks;
    /** The names of the held shards as of the scheduler's last change, for status reads from any thread. */
    private volatile Set<String> runningHere = Set.of();

    private final ShardParts parts;

    ShardOwnership(ShardParts parts) {
        this.parts = parts;
        this.context = parts.context();
        this.settings = parts.settings();
        this.nodes = new NodeHeartbeats(parts);
        this.scheduler = parts.scheduler();
        this.time = parts.time();
        this.handover = ShardHandover.of(parts);
        Duration grace = RearmingLoop.graceOn(settings);
        this.acquiring = new RearmingLoop("HotCold lock acquisition", scheduler, settings.getLockAcquireInterval(),
                grace, time);
        this.monitoring = new RearmingLoop("HotCold lock monitor", scheduler, settings.getMonitoringInterval(), grace,
                time);
    }

    /**
     * Adds shards to compete for: before {@link #start()}, or on the scheduler thread (a tenant's shards appear when
     * its first events do), which owns the lock map from then on.
     */
    void add(List<ShardAgent> agents) {
        Map<String, ShardAgent> added = new LinkedHashMap<>();
        for (ShardAgent agent : agents) {
            String lockName = Dialect.shardLockName(context.names(), agent.name());
            String other = lockKeys.putIfAbsent(AdvisoryLockKeys.keyOf(lockName), lockName);
            if (other != null && !other.equals(lockName)) {
                throw new ConfigurationException("lock names '" + other + "' and '" + lockName
                        + "' hash to the same advisory lock key; rename one of the shards");
            }
            added.put(lockName, agent);
        }
        lockNames.putAll(added);
    }

    /**
     * On the scheduler thread: takes shards out of the competition (a tenant released). A held one is asked to stop
     * and its lock is released once it has drained, as when a node gives shards back.
     */
    void remove(List<ShardAgent> agents) {
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time);
        ShardLockSession session = locks;
        for (ShardAgent agent : agents) {
            String lockName = Dialect.shardLockName(context.names(), agent.name());
            lockNames.remove(lockName);
            if (held.remove(lockName) != null) {
                publishHeld();
                agent.requestStop();
                handover.drain(lockName, agent, deadline, () -> release(session, lockName, agent, -1, -1));
            }
        }
    }

    void start() {
        acquiring.start(this::acquireRound, Duration.ZERO);
        if (settings.isMonitoring()) {
            monitoring.start(this::monitorRound, settings.getMonitoringInterval());
        } else {
            LOG.warn("HotCold lock monitor is off (daemon.lock.monitoring-interval {}): a node that loses its"
                    + " database session keeps running its shards while another node takes them over, so both run"
                    + " them (split brain)", settings.getMonitoringInterval());
        }
    }

    /** The shards this node holds; for status and tests. */
    Set<String> heldShards() {
        try {
            return scheduler.submit(() -> {
                Set<String> names = new LinkedHashSet<>();
                held.values().forEach(agent -> names.add(agent.name()));
                return names;
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // a status read: a scheduler that is busy past the bound or gone reports no shards rather than fail
            LOG.debug("Could not read the held shards from the scheduler thread", e);
            return Set.of();
        }
    }

    /** The shards this node holds as the scheduler last published them: never waits for the scheduler. */
    Set<String> runningHere() {
        return runningHere;
    }

    private void publishHeld() {
        Set<String> names = new LinkedHashSet<>();
        held.values().forEach(agent -> names.add(agent.name()));
        runningHere = Collections.unmodifiableSet(names);
    }

    /** The database session id of the lock connection, or -1 without one; for operators and tests. */
    long lockSessionId() {
        try {
            return scheduler.submit(() -> locks == null ? -1L : locks.sessionId()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // for operators and tests only: a busy or gone scheduler reports no session rather than fail
            LOG.debug("Could not read the lock session from the scheduler thread", e);
            return -1;
        }
    }

    /** The supervisor's check: schedules a round that was refused, dropped or cancelled again. */
    void rearmIfOverdue() {
        acquiring.rearmIfOverdue();
        monitoring.rearmIfOverdue();
    }

    /**
     * Why this node cannot take part in HotCold right now: a lock round has not finished within four of its
     * intervals plus the probe timeout (its loop is being re-armed).
     */
    Optional<String> livenessProblem() {
        for (RearmingLoop loop : List.of(acquiring, monitoring)) {
            Duration interval = loop == acquiring ? settings.getLockAcquireInterval()
                    : settings.getMonitoringInterval();
            if (loop == monitoring && !settings.isMonitoring()) {
                continue;
            }
            Duration bound = interval.multipliedBy(4).plus(settings.getProbeTimeout());
            Duration since = loop.sinceLastRun();
            if (since.compareTo(bound) > 0) {
                return Optional.of("the " + loop.name() + " has not finished a round for " + since.toMillis()
                        + " ms (bound " + bound.toMillis() + " ms)");
            }
        }
        return Optional.empty();
    }

    private Duration acquireRound() {
        try {
            if (locks == null) {
                locks = context.dialect().openShardLocks(context.dataSource(), context.names());
            }
            int live;
            try {
                live = nodes.beatAndCountLive();
            } catch (SQLException | RuntimeException e) {
                // a pooled connection failed, not the lock session (the monitor probes that): keep every lock
                LOG.warn("The HotCold heartbeat failed ({}); keeping the locks held and trying again next round",
                        e.toString());
                return settings.getLockAcquireInterval();
            }
            int share = (lockNames.size() + live - 1) / live;
            giveBackAbove(share, live);
            for (Map.Entry<String, ShardAgent> shard : lockNames.entrySet()) {
                if (held.size() >= share) {
                    break;
                }
                if (!held.containsKey(shard.getKey()) && !handover.isDraining(shard.getKey())
                        && locks.tryLock(shard.getKey())) {
                    held.put(shard.getKey(), shard.getValue());
                    publishHeld();
                    LOG.info("Took shard {} (session {})", shard.getValue().name(), locks.sessionId());
                    shard.getValue().start();
                }
            }
            nodes.cleanUpDeadNodes();
        } catch (SQLException | RuntimeException e) {
            LOG.warn("HotCold lock upkeep failed ({}); replacing the lock connection", e.toString());
            lostSession();
        }
        return settings.getLockAcquireInterval();
    }

    /**
     * A node joined: what is above this node's share is given back. Every such shard is asked to stop, and all drain
     * against one deadline off the scheduler thread ({@link ShardHandover}); each lock is released once its shard has
     * drained (pages and outbox), never while it may still commit, and only on the session that held it.
     */
    private void giveBackAbove(int share, int live) {
        List<String> names = new ArrayList<>(held.keySet());
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time);
        ShardLockSession session = locks;
        for (int i = names.size() - 1; i >= 0 && held.size() > share; i--) {
            String lockName = names.get(i);
            ShardAgent agent = held.remove(lockName);
            publishHeld();
            agent.requestStop();
            handover.drain(lockName, agent, deadline, () -> release(session, lockName, agent, live, share));
        }
    }

    private void release(ShardLockSession session, String lockName, ShardAgent agent, int live, int share) {
        if (session != locks) {
            return; // the session that held the lock is gone, and the lock with it
        }
        try {
            session.release(lockName);
            if (live < 0) {
                LOG.info("Gave shard {} back: its tenant was released", agent.name());
            } else {
                LOG.info("Gave shard {} back: {} live nodes, a share of {}", agent.name(), live, share);
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Releasing the lock of shard {} failed ({}); replacing the lock connection", agent.name(),
                    e.toString());
            lostSession();
        }
    }

    private Duration monitorRound() {
        if (held.isEmpty()) {
            return settings.getMonitoringInterval(); // costs nothing while this node holds no locks
        }
        Set<String> stillHeld;
        try {
            stillHeld = locks.probe(held.keySet(), settings.getProbeTimeout());
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Lock probe failed ({}): the session and its locks are gone", e.toString());
            lostSession();
            return settings.getMonitoringInterval();
        }
        for (String name : new ArrayList<>(held.keySet())) {
            if (!stillHeld.contains(name)) {
                ShardAgent agent = held.remove(name);
                publishHeld();
                LOG.warn("Lost the lock of shard {}; stopping it", agent.name());
                agent.lockLost();
                handover.drain(name, agent, ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time),
                        () -> { });
            }
        }
        return settings.getMonitoringInterval();
    }

    /**
     * The outbox sweep's claim, called on a worker: of the shards with undelivered rows, those of no current
     * projection ({@code retired}) are swept by the node that takes their lock, on the scheduler thread, which owns
     * the lock session; the lock is given back when the sweep ends. A current shard's rows are its owner's.
     */
    void sweepRetired(Map<TenantDatabases.Database, Set<String>> pending, Predicate<String> retired) {
        try {
            scheduler.execute(() -> claimRetired(pending, retired));
        } catch (RejectedExecutionException e) {
            LOG.debug("The scheduler refused the outbox sweep's lock round; the next sweep asks again");
        }
    }

    private void claimRetired(Map<TenantDatabases.Database, Set<String>> pending, Predicate<String> retired) {
        if (locks == null) {
            return;
        }
        pending.forEach((database, shards) -> {
            for (String shard : shards) {
                String lockName = Dialect.shardLockName(context.names(), shard);
                if (!retired.test(shard) || sweepLocks.containsKey(lockName) || lockNames.containsKey(lockName)) {
                    continue;
                }
                try {
                    if (!locks.tryLock(lockName)) {
                        continue;
                    }
                } catch (SQLException | RuntimeException e) {
                    LOG.warn("Taking the lock of retired shard {} to sweep its outbox failed: {}", shard, e.toString());
                    return;
                }
                ShardOutbox outbox = parts.outboxes().of(shard, database, parts);
                sweepLocks.put(lockName, outbox);
                LOG.info("Took the lock of retired shard {} to deliver its outbox rows", shard);
                if (!outbox.sweep(() -> releaseSweepLock(lockName))) {
                    releaseSweepLock(lockName);
                }
            }
        });
    }

    /** A sweep ended (from any thread): its lock is given back on the scheduler thread. */
    private void releaseSweepLock(String lockName) {
        try {
            scheduler.execute(() -> {
                if (sweepLocks.remove(lockName) != null && locks != null) {
                    try {
                        locks.release(lockName);
                    } catch (SQLException | RuntimeException e) {
                        LOG.debug("Releasing the sweep lock {} failed; the session's end releases it", lockName, e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("The scheduler is gone; the lock session's end releases the sweep lock {}", lockName);
        }
    }

    /** The session died: every lock went with it, so every held shard stops; the next round competes again. */
    private void lostSession() {
        new ArrayList<>(sweepLocks.values()).forEach(ShardOutbox::stop);
        sweepLocks.clear();
        long deadline = ShardAgent.deadlineAfter(settings.getStopAndDrainTimeout(), time);
        held.forEach((lockName, agent) -> {
            agent.lockLost();
            handover.drain(lockName, agent, deadline, () -> { });
        });
        held.clear();
        publishHeld();
        if (locks != null) {
            locks.close();
            locks = null;
        }
    }

    /** This node's heartbeat row name. */
    String nodeName() {
        return nodes.nodeName();
    }

    /** Every node's heartbeat row with the time since its last beat, read now. */
    Map<String, Duration> nodes() throws SQLException {
        return nodes.nodes();
    }

    /**
     * The node stops: no round takes another shard or gives one back from here on, while the held ones drain (a
     * round in flight finishes). The locks stay held until {@link #stop}.
     */
    void halt() {
        acquiring.stop();
        monitoring.stop();
    }

    /**
     * After the agents drained: releases every lock and removes the heartbeat, on the scheduler thread, so it
     * waits behind a probe in flight. Waits until {@code deadlineNanos} plus one probe timeout: the probe is the
     * only thing it can wait behind.
     */
    void stop(long deadlineNanos) {
        acquiring.stop();
        monitoring.stop();
        long bound = deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE
                : Math.max(0, deadlineNanos - time.nanoTime()) + settings.getProbeTimeout().toNanos();
        try {
            scheduler.submit(() -> {
                held.clear();
                publishHeld();
                handover.clear();
                sweepLocks.clear();
                if (locks != null) {
                    locks.close();
                    locks = null;
                }
                nodes.remove();
                return null;
            }).get(bound, TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            LOG.warn("Releasing the HotCold locks did not finish cleanly: {}", e.toString());
        }
    }
}
