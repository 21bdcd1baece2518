package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A page whose commit failed after its work returned, until its outcome is known: the server may have committed and
 * only the reply was lost. The outcome is read back from the page's progression row on a fresh connection and compared
 * with the (end, stamp) the page wrote. Written and read only by the shard's one loop run in flight (and cleared by a
 * rebuild while none runs); published through a volatile.
 */
final class UnknownCommit {

    private static final Logger LOG = LoggerFactory.getLogger(UnknownCommit.class);

    private final String name;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    private volatile PageOutcome unresolved;

    UnknownCommit(String name, DataSource dataSource, ProgressionRows progression) {
        this.name = name;
        this.dataSource = dataSource;
        this.progression = progression;
    }

    /** The commit of {@code outcome}'s page reported a failure: nothing is loaded until it is settled. */
    void park(PageOutcome outcome) {
        unresolved = outcome;
    }

    /** A rebuild replays from its own row: the parked page is redone by the replay, never read back. */
    void forget() {
        unresolved = null;
    }

    /**
     * Settles the parked page, if any: committed, {@code committed} runs its post-commit work now; not committed, the
     * page is loaded again. Throws (and keeps the page parked) while the database cannot be read; a progression that
     * neither the attempt nor its floor explains is a conflict.
     */
    void settle(Consumer<PageOutcome> committed) throws SQLException {
        PageOutcome outcome = unresolved;
        if (outcome == null) {
            return;
        }
        PageAttempt attempt = outcome.attempt();
        Optional<ProgressionRows.Stamped> row = progression.readStamped(dataSource, attempt.row(name));
        Long at = row.map(ProgressionRows.Stamped::lastSeqId).orElse(null);
        OffsetDateTime stamp = row.map(ProgressionRows.Stamped::lastUpdated).orElse(null);
        unresolved = null;
        if (at != null && at == attempt.end() && stamp != null
                && stamp.toInstant().equals(attempt.stamp().toInstant())) {
            LOG.info("Shard {}'s page ({}, {}] committed although its commit reported a failure; running its"
                    + " post-commit work once", name, attempt.floor(), attempt.end());
            committed.accept(outcome);
        } else if (at == null ? attempt.floor() == 0 : at == attempt.floor()) {
            LOG.info("Shard {}'s page ({}, {}] did not commit; it is processed again", name, attempt.floor(),
                    attempt.end());
        } else {
            throw new ProgressionConflictException(name, attempt.floor());
        }
    }
}
