package dev.ferret.runtime.daemon;

import dev.ferret.DatabaseException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ShardState;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's verbs on one shard (restart, hold, skip the failed event, the dead letters and their replay), each
 * turned into the shard's lifecycle events. Under HotCold a verb runs only on the node that holds the shard's lock.
 */
final class DaemonOperations {

    private static final Logger LOG = LoggerFactory.getLogger(DaemonOperations.class);

    private final StoreContext context;
    private final DaemonSettings settings;
    private final ShardParts parts;
    private final ShardRegistry registry;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    private final BooleanSupplier running;

    DaemonOperations(ShardParts parts, ShardRegistry registry, ShardOwnership ownership, BooleanSupplier running) {
        this.context = parts.context();
        this.settings = parts.settings();
        this.parts = parts;
        this.registry = registry;
        this.ownership = ownership;
        this.running = running;
    }

    void restart(String shardName) {
        ShardAgent agent = registry.agentFor(shardName);
        requireHeldHere(agent, "restart");
        agent.stop(settings.getStopAndDrainTimeout());
        if (running.getAsBoolean()) {
            agent.start();
        }
    }

    void hold(String shardName) {
        ShardAgent agent = registry.agentFor(shardName);
        requireHeldHere(agent, "hold");
        if (!agent.hold(settings.getStopAndDrainTimeout())) {
            LOG.warn("Shard {} was held past the drain bound: its page in flight was cancelled and is re-processed"
                    + " when it restarts", shardName);
        }
    }

    long skipFailedEvent(String shardName) {
        ShardAgent agent = registry.agentFor(shardName);
        requireHeldHere(agent, "skip the failed event of");
        if (!running.getAsBoolean()) {
            throw new IllegalStateException("the daemon is stopped; shard " + agent.name() + " cannot restart");
        }
        return agent.skipFailedEvent();
    }

    Map<String, Long> deadLetterCounts() {
        Map<String, Long> counts = new TreeMap<>();
        try {
            for (TenantDatabases.Database database : context.databases().all()) {
                DeadLetterRows.count(parts, database.dataSource(), counts);
            }
        } catch (SQLException e) {
            throw new DatabaseException("could not count the dead letters: " + e.getMessage(), e);
        }
        return counts;
    }

    List<DeadLetterEvent> deadLetters(String shardName, long afterId, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("a page of dead letters holds at least one; limit was " + limit);
        }
        ShardAgent agent = registry.agentFor(shardName);
        try {
            return DeadLetterRows.page(parts, agent.partition().database().dataSource(), agent.name(), afterId,
                    limit);
        } catch (SQLException e) {
            throw new DatabaseException("could not read the dead letters of " + agent.name() + ": " + e.getMessage(),
                    e);
        }
    }

    boolean discardDeadLetter(String shardName, long deadLetterId) {
        ShardAgent agent = registry.agentFor(shardName);
        try {
            boolean deleted = context.transactions().inTransaction(agent.partition().database().dataSource(),
                    c -> DeadLetterRows.delete(c, parts, agent.name(), deadLetterId));
            if (deleted) {
                LOG.info("Dead letter {} of shard {} was discarded", deadLetterId, agent.name());
            }
            return deleted;
        } catch (SQLException e) {
            throw new DatabaseException("could not discard dead letter " + deadLetterId + " of " + agent.name()
                    + ": " + e.getMessage(), e);
        }
    }

    void replayDeadLetter(String shardName, long deadLetterId) {
        ShardAgent agent = registry.agentFor(shardName);
        if (agent.state() == ShardState.STOPPED) {
            throw new IllegalStateException("shard " + agent.name() + " does not run on this node"
                    + (settings.getMode() == DaemonMode.HOT_COLD ? " (HotCold: replay on the node that holds it)"
                    : " (the daemon is stopped)"));
        }
        try {
            DeadLetterEvent dead = DeadLetterRows.one(parts, agent.partition().database().dataSource(), agent.name(),
                    deadLetterId).orElseThrow(() -> new IllegalArgumentException("shard " + agent.name()
                    + " has no dead letter " + deadLetterId));
            agent.replay(dead, settings.getStopAndDrainTimeout());
        } catch (SQLException e) {
            throw new DatabaseException("could not replay dead letter " + deadLetterId + " of " + agent.name()
                    + ": " + e.getMessage(), e);
        }
    }

    /**
     * Under HotCold, an operator's verb on a shard runs only on the node that holds its lock: anywhere else it would
     * run the shard without the lock, beside its owner. Refused here, naming why; ask the node that holds it.
     */
    void requireHeldHere(ShardAgent agent, String verb) {
        if (ownership != null && !ownership.heldShards().contains(agent.name())) {
            throw new IllegalStateException("cannot " + verb + " shard " + agent.name() + " on this node: under"
                    + " HotCold another node holds its lock (this node holds " + ownership.heldShards().size()
                    + " shards); ask the node that runs it (its console or status lists it as running)");
        }
    }
}
