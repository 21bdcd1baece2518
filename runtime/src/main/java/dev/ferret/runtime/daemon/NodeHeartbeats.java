package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HotCold's node rows: this node's heartbeat, the count of live nodes a share is computed from, every node with the
 * age of its last beat (for operators), and the clean-up of rows of nodes long gone. A node is live while its row is
 * younger than four acquire intervals. Beats, counts and clean-up run on the scheduler thread, inside a lock round;
 * {@link #nodes()} reads from any thread.
 */
final class NodeHeartbeats {

    private static final Logger LOG = LoggerFactory.getLogger(NodeHeartbeats.class);
    /** A node whose heartbeat is older than this many acquire intervals counts as gone. */
    private static final int HEARTBEATS_TO_LIVE = 4;
    /** Heartbeat rows older than this many liveness cut-offs belong to nodes that are long gone. */
    private static final int DEAD_FOR_CUT_OFFS = 10;
    private static final int CLEAN_UP_EVERY = 16;

    private final StoreContext context;
    private final ProgressionRows progression;
    private final String listNodes;
    private final Duration acquireInterval;
    private final String nodeRow = DaemonSql.HEARTBEAT_ROW_PREFIX + UUID.randomUUID();
    private int roundsSinceCleanUp; // scheduler thread

    NodeHeartbeats(ShardParts parts) {
        this.context = parts.context();
        this.progression = parts.progression();
        this.listNodes = parts.sql().listNodes();
        this.acquireInterval = parts.settings().getLockAcquireInterval();
    }

    /** This node's heartbeat row name. */
    String nodeName() {
        return nodeRow;
    }

    /** Writes this node's beat, then counts the live nodes, itself included (at least one). */
    int beatAndCountLive() throws SQLException {
        progression.raise(context.dataSource(), nodeRow, context.clock().millis(), OffsetDateTime.now(context.clock()));
        long cutOff = context.clock().millis() - acquireInterval.toMillis() * HEARTBEATS_TO_LIVE;
        return Math.max(1, progression.countLiveNodes(context.dataSource(), cutOff));
    }

    /**
     * Every few rounds, deletes the heartbeat rows of nodes gone for ten times the liveness cut-off: killed nodes
     * never remove their own, and a long-lived cluster would otherwise collect one row per node start forever.
     */
    void cleanUpDeadNodes() throws SQLException {
        if (++roundsSinceCleanUp < CLEAN_UP_EVERY) {
            return;
        }
        roundsSinceCleanUp = 0;
        long cutOff = context.clock().millis() - acquireInterval.toMillis() * HEARTBEATS_TO_LIVE * DEAD_FOR_CUT_OFFS;
        int removed = progression.deleteDeadNodes(context.dataSource(), cutOff);
        if (removed > 0) {
            LOG.info("Removed the heartbeat rows of {} HotCold nodes gone for a long time", removed);
        }
    }

    /** Every node's heartbeat row with the time since its last beat, read now. */
    Map<String, Duration> nodes() throws SQLException {
        Map<String, Duration> nodes = new TreeMap<>();
        long now = context.clock().millis();
        try (Connection c = context.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(listNodes);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                nodes.put(rs.getString(1), Duration.ofMillis(Math.max(0, now - rs.getLong(2))));
            }
        }
        return nodes;
    }

    /** The node leaves: its row goes, so the others count one node fewer at once. */
    void remove() throws SQLException {
        progression.delete(context.dataSource(), nodeRow);
    }
}
