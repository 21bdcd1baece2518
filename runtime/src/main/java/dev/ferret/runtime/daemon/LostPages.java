package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pages a shard committed that its database then lost: a server crash soon after commits that did not wait for the
 * flush ({@code asyncPageCommits}; a page that raises events waits for it, so no sequence number it drew is handed
 * out again). Their only trace is the shard's progression row lying behind the floor this node holds (the row's
 * conditional writes only ever move it forward, so no other runner puts it back); resuming from the row applies them
 * again. Looked for when a page finds the row moved, and on the shard's next turn after the daemon could not reach
 * the shard's database (an idle shard has no next page to find it). A database restored from a backup under a
 * running node is not this case: the node's marks are past the restored events, so it must be restarted.
 *
 * <p>Owned by the shard's page loop; {@link #recheck} may be called from any thread (the detector's).
 */
final class LostPages {

    private static final Logger LOG = LoggerFactory.getLogger(LostPages.class);

    private final String name;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    /** False where no committed page can be lost: every row behind the floor stays a conflict. */
    private final boolean enabled;
    /** The row the shard's pages advance: the replay's while a rebuild replays. */
    private final Supplier<String> row;
    /**
     * Whether a missing row means zero: not for a replay (its row is gone once a swap committed) nor for a
     * subscription from the present (it would replay all history).
     */
    private final BooleanSupplier missingIsZero;
    private volatile boolean recheck;

    LostPages(String name, DataSource dataSource, ProgressionRows progression, boolean enabled,
              Supplier<String> row, BooleanSupplier missingIsZero) {
        this.name = name;
        this.dataSource = dataSource;
        this.progression = progression;
        this.enabled = enabled;
        this.row = row;
        this.missingIsZero = missingIsZero;
    }

    /** The shard's database was unreachable: its next turn reads the row before anything else. */
    void recheck() {
        recheck = enabled;
    }

    boolean recheckDue() {
        return recheck;
    }

    /**
     * Where the shard's row stands when that is behind {@code floor} (a missing row counts as zero), said in a
     * warning; else -1. Clears a pending {@link #recheck}.
     */
    long behind(long floor) throws SQLException {
        if (!enabled) {
            return -1;
        }
        recheck = false;
        OptionalLong persisted;
        try {
            persisted = progression.find(dataSource, row.get());
        } catch (SQLException | RuntimeException e) {
            // a connection the restart left stale: the next turn reads again
            recheck = true;
            throw e;
        }
        if (persisted.isEmpty() && !missingIsZero.getAsBoolean()) {
            return -1;
        }
        long at = persisted.orElse(0);
        if (at >= floor) {
            return -1;
        }
        LOG.warn("Shard {} found its progression row at {}, behind the {} it had committed: the database lost"
                + " committed pages (a server crash after commits that did not wait for the flush, or a restore);"
                + " applying them again from {}", name, at, floor, at);
        return at;
    }

    /** {@link #behind} for a page that found its row moved; -1 (the conflict stands) when the row cannot be read. */
    long behind(long floor, ProgressionConflictException conflict) {
        try {
            return behind(floor);
        } catch (SQLException e) {
            conflict.addSuppressed(e);
            return -1;
        }
    }
}
