package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.util.OptionalLong;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pages a shard committed that its database then lost: a server crash soon after commits that did not wait for the
 * flush ({@code asyncPageCommits}), or a restore from a backup. Their only trace is the shard's progression row lying
 * behind the floor this node holds (the row's conditional writes only ever move it forward, so no other runner puts
 * it back); resuming from the row applies them again. Looked for when a page finds the row moved, and on the shard's
 * next turn after the daemon could not reach the shard's database (an idle shard has no next page to find it).
 *
 * <p>Owned by the shard's page loop; {@link #recheck} may be called from any thread (the detector's).
 */
final class LostPages {

    private static final Logger LOG = LoggerFactory.getLogger(LostPages.class);

    private final String name;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    /** The row the shard's pages advance: the replay's while a rebuild replays. */
    private final Supplier<String> row;
    private volatile boolean recheck;

    LostPages(String name, DataSource dataSource, ProgressionRows progression, Supplier<String> row) {
        this.name = name;
        this.dataSource = dataSource;
        this.progression = progression;
        this.row = row;
    }

    /** The shard's database was unreachable: its next turn reads the row before anything else. */
    void recheck() {
        recheck = true;
    }

    boolean recheckDue() {
        return recheck;
    }

    /**
     * Where the shard's row stands when that is behind {@code floor} (a missing row counts as zero), said in a
     * warning; else -1. Clears a pending {@link #recheck}.
     */
    long behind(long floor) throws SQLException {
        recheck = false;
        OptionalLong persisted = progression.find(dataSource, row.get());
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
