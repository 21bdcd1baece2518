package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store-wide backstop of the outbox: finds, in every database, the shards with undelivered rows and hands them
 * to a claim, which sweeps those no agent on this node delivers. Without it a message whose shard stopped running
 * for good (a retired blue/green version, a tenant not seen since a restart, a version stopped before its last
 * rows went out) would wait forever. SOLO claims every shard without an agent here; HotCold claims a retired
 * shard's lock first ({@link ShardOwnership#sweepRetired}), so one node sweeps it.
 *
 * <h2>Concurrency</h2>
 * {@link #due} runs on the supervisor's turn (the scheduler thread), which owns {@link #lastRunNanos}; the read itself
 * runs on a worker, at most one at a time ({@link #inFlight}, volatile, set by the scheduler thread and cleared by the
 * read), so a slow database never holds the scheduler. The claim is called on that worker.
 */
final class OrphanedOutboxes {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanedOutboxes.class);
    /** The sweep reads once per this many polling intervals. */
    static final int POLLING_INTERVALS_PER_SWEEP = 4;

    private final ShardParts parts;
    private final Duration every;
    private final Consumer<Map<TenantDatabases.Database, Set<String>>> claim;
    private long lastRunNanos;
    private boolean ranOnce;
    private volatile boolean inFlight;
    /** Databases the last sweeps could not read; owned by the one sweep in flight. */
    private final Set<String> unreadable = new HashSet<>();

    /** {@code claim} gets, per database, the shards with undelivered rows; it sweeps the ones it may. */
    OrphanedOutboxes(ShardParts parts, Consumer<Map<TenantDatabases.Database, Set<String>>> claim) {
        this.parts = parts;
        this.every = parts.settings().getPollingInterval().multipliedBy(POLLING_INTERVALS_PER_SWEEP);
        this.claim = claim;
    }

    /** The supervisor's turn: starts a read on a worker when one is due and none is in flight. */
    void due(long nowNanos) {
        if (inFlight || ranOnce && nowNanos - lastRunNanos < every.toNanos()) {
            return;
        }
        ranOnce = true;
        lastRunNanos = nowNanos;
        inFlight = true;
        try {
            parts.workers().execute(this::sweepOnce);
        } catch (RejectedExecutionException e) {
            inFlight = false;
            LOG.debug("The workers refused the outbox sweep; it runs on a later supervisor turn");
        }
    }

    private void sweepOnce() {
        try {
            Map<TenantDatabases.Database, Set<String>> pending = new LinkedHashMap<>();
            for (TenantDatabases.Database database : parts.context().databases().all()) {
                try {
                    Set<String> shards = pendingShards(database);
                    if (!shards.isEmpty()) {
                        pending.put(database, shards);
                    }
                    if (unreadable.remove(database.name())) {
                        LOG.info("The outbox sweep reads database {} again", database.name());
                    }
                } catch (SQLException | RuntimeException e) {
                    // one database that cannot be read holds only its own rows back; said once per outage
                    if (unreadable.add(database.name())) {
                        LOG.warn("The outbox sweep cannot read database {} ({}); it tries again every sweep",
                                database.name(), e.toString());
                    } else {
                        LOG.debug("The outbox sweep still cannot read database {}: {}", database.name(), e.toString());
                    }
                }
            }
            if (!pending.isEmpty()) {
                claim.accept(pending);
            }
        } catch (RuntimeException e) {
            LOG.warn("The outbox sweep failed: {}", e.toString());
        } finally {
            inFlight = false;
        }
    }

    private Set<String> pendingShards(TenantDatabases.Database database) throws SQLException {
        return pendingShards(parts, database);
    }

    /** Every shard of {@code database} with an undelivered row: one statement, whose cost follows the backlog. */
    static Set<String> pendingShards(ShardParts parts, TenantDatabases.Database database) throws SQLException {
        Set<String> shards = new LinkedHashSet<>();
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(parts.outboxSql().pendingShards());
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                shards.add(rs.getString(1));
            }
        }
        return shards;
    }

    /** SOLO's claim: every shard without an agent on this node ({@code runsHere} false) is swept. */
    static Consumer<Map<TenantDatabases.Database, Set<String>>> sweepingWhatNoAgentRuns(ShardParts parts,
            Predicate<String> runsHere) {
        return pending -> pending.forEach((database, shards) -> {
            for (String shard : shards) {
                if (!runsHere.test(shard)
                        && parts.outboxes().of(shard, database, parts).sweep(() -> LOG.info(
                                "Swept the outbox of shard {}, which no agent runs here", shard))) {
                    LOG.info("Delivering the outbox rows of shard {}, which no agent runs here", shard);
                }
            }
        });
    }
}
