package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.daemon.ShardLifecycle.Event;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a shard's loop starts, at its first turn after a (re)start: the present's mark for a subscription that starts
 * there; the replay's row for a rebuild under way; else its persisted progression (from the rows read at the daemon's
 * start when it can), and a rebuild's replay left unfinished resumes from its own row. A gated version also learns
 * the prior versions' mark, up to which its side effects stay held back.
 *
 * <p>Stateless but for what it asks of the {@link ShadowReplay} and fires on the lifecycle; called only by the loop
 * run in flight.
 */
final class ShardStart {

    private static final Logger LOG = LoggerFactory.getLogger(ShardStart.class);

    /** Where the loop starts: its floor, and the bound below which side effects stay held back (-1: none). */
    record Start(long floor, long warmUpUntil) {
    }

    private final String name;
    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final ShardParts parts;
    private final StoreContext context;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    private final ShardLifecycle lifecycle;
    private final ShadowReplay shadow;
    private final TransientRetry retry;
    private final LongSupplier mark;

    ShardStart(String name, ProjectionApplier applier, LogPartition partition, ShardParts parts,
               ShardLifecycle lifecycle, ShadowReplay shadow, TransientRetry retry, LongSupplier mark) {
        this.name = name;
        this.applier = applier;
        this.partition = partition;
        this.parts = parts;
        this.context = parts.context();
        this.dataSource = partition.database().dataSource();
        this.progression = parts.progression();
        this.lifecycle = lifecycle;
        this.shadow = shadow;
        this.retry = retry;
        this.mark = mark;
    }

    /** Where the loop starts; null while a subscription from the present waits for the mark's first read. */
    Start start() throws Exception {
        if (applier.startsFromPresent()) {
            if (!parts.marks().known(partition)) {
                // the supervisor wakes the shard after the detector's first read
                return null;
            }
            return new Start(retry.call(this::startFromPresent), -1);
        }
        long persisted;
        if (shadow.replaying()) {
            persisted = retry.call(this::readReplayRow);
        } else {
            OptionalLong atStart = parts.startRows().firstStart(name);
            persisted = resumeUnfinishedReplay(atStart.isPresent() ? atStart.getAsLong()
                    : retry.call(this::readProgression));
        }
        long warmUpUntil = -1;
        if (applier.gatesSideEffects()) {
            // snapshotted at each start: an interrupted warm-up resumes held back
            long prior = retry.call(this::priorVersionsMark);
            warmUpUntil = persisted < prior ? prior : -1;
            if (warmUpUntil > 0) {
                LOG.info("Shard {} replays to {} (the prior version's mark) with side effects held back", name,
                        prior);
            }
        }
        return new Start(persisted, warmUpUntil);
    }

    /** Moves the progression row up to the current mark, ignoring history, and starts there. */
    private long startFromPresent() throws SQLException {
        long present = mark.getAsLong();
        progression.raise(dataSource, name, present, OffsetDateTime.now(context.clock()));
        LOG.info("Shard {} subscribes from the present: starting at {}", name, present);
        return readProgression();
    }

    private long readProgression() throws SQLException {
        return progression.read(dataSource, name);
    }

    /**
     * A replaying shard's floor at a (re)start: its replay's row; gone, the replay was swapped in by another node that
     * held the shard meanwhile, and the shard runs live from its row.
     */
    private long readReplayRow() throws SQLException {
        OptionalLong replay = shadow.rowAtRestart(dataSource);
        if (replay.isPresent()) {
            return replay.getAsLong();
        }
        lifecycle.fire(Event.REBUILD_REACHED);
        LOG.info("Shard {}'s rebuild was swapped in elsewhere meanwhile; it runs live", name);
        return readProgression();
    }

    /**
     * A replay row left by a rebuild that did not swap (the node stopped) resumes that rebuild from its row up to the
     * current mark, behind the live tables; returns the floor to start from.
     */
    private long resumeUnfinishedReplay(long live) throws Exception {
        OptionalLong unfinished = parts.startRows().firstStartIfPresent(shadow.row());
        if (unfinished == null) {
            unfinished = retry.call(() -> shadow.unfinished(dataSource));
        }
        if (unfinished.isEmpty()) {
            return live;
        }
        long target = mark.getAsLong();
        shadow.begin(target, live);
        lifecycle.fire(Event.REBUILD_RESUMED);
        LOG.info("Shard {} resumes the rebuild it left at {} behind its live tables (live at {}), up to {}", name,
                unfinished.getAsLong(), live, target);
        return unfinished.getAsLong();
    }

    /** The highest progression any prior version of this projection persisted. */
    private long priorVersionsMark() throws SQLException {
        List<String> prior = new ArrayList<>();
        for (int version = 1; version < applier.version(); version++) {
            prior.add(partition.shardName(ShardNames.base(applier.name(), version)));
        }
        return progression.highest(dataSource, prior);
    }
}
