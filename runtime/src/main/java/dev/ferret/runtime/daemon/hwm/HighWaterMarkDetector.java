package dev.ferret.runtime.daemon.hwm;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes the high water mark: the highest sequence below which no hole can still fill.
 *
 * <p>Identity values are drawn outside transactions, so a hole is either a rolled-back append (permanent) or one
 * still in flight (it will fill). The mark stops before the first hole. Every append, right after its insert, takes
 * a transaction-scoped owner lock on each number it drew ({@link Dialect#ownAppendedSequences}). A hole seen for
 * longer than the grace (the polling interval, at most the stale threshold) is asked about its owner alone: in one
 * transaction the detector takes the owner locks of the hole's numbers without waiting, re-reads the range, and
 * raises the persisted mark past it. A held lock means the owner is open: the mark holds (reported as a stall past
 * the stale threshold) and nothing waits on anything. No store-wide lock is taken. Only past the forced-skip
 * threshold is an owned hole skipped, loudly. docs/guide/daemon.md, "Holes and their owners", gives the argument
 * that no committed event is passed.
 *
 * <p>All state is owned by the single thread that calls {@link #detect()}; {@link #mark()} and {@link #status()}
 * publish it to other threads.
 */
public final class HighWaterMarkDetector {

    private static final Logger LOG = LoggerFactory.getLogger(HighWaterMarkDetector.class);

    /** The progression row the mark is persisted in, so a restart does not wait on old holes again. */
    public static final String PROGRESSION_NAME = "HighWaterMark";
    private static final int RECENT_SKIPS = 20;
    /**
     * The most numbers one detection claims: every claimed number is a lock held until the claim commits, and
     * PostgreSQL's lock table is shared and bounded; a larger hole (an identity cache lost in a restart) is passed
     * over several detections.
     */
    static final int MAX_CLAIMED_SEQUENCES = 1_000;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final TableNames names;
    private final DaemonSql sql;
    private final DaemonSettings settings;
    private final Clock clock;
    private final ProgressionRows progression;

    private volatile long mark;
    private volatile HighWaterMarkStatus status;

    private long highestSeen;
    private long persistedMark;
    private long trackedGapAt = -1;
    private Instant gapSeenAt;
    private final Deque<GapSkip> recentSkips = new ArrayDeque<>();
    private long totalSkips;
    private long totalSkippedSequences;

    public HighWaterMarkDetector(DataSource dataSource, Dialect dialect, TableNames names, DaemonSettings settings,
                                 Clock clock) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.names = names;
        this.sql = dialect.daemonSql(names);
        this.settings = settings;
        this.clock = clock;
        this.progression = new ProgressionRows(dialect, sql);
        this.status = new HighWaterMarkStatus(0, 0, false, null, Duration.ZERO, List.of(), 0, 0);
    }

    public long mark() {
        return mark;
    }

    public HighWaterMarkStatus status() {
        return status;
    }

    /** Reads the persisted mark; call once, before the first {@link #detect()}. */
    public void loadPersistedMark() throws SQLException {
        OptionalLong persisted = progression.find(dataSource, PROGRESSION_NAME);
        if (persisted.isPresent()) {
            mark = persisted.getAsLong();
            highestSeen = mark;
            persistedMark = mark;
        }
    }

    /**
     * One detection. Returns whether the mark moved.
     *
     * @throws SQLException when the database could not be read; the mark is kept and the status turns unhealthy
     */
    public boolean detect() throws SQLException {
        try {
            return detectOnce();
        } catch (SQLException | RuntimeException e) {
            status = new HighWaterMarkStatus(mark, highestSeen, false, e, stalledFor(clock.instant()),
                    List.copyOf(recentSkips), totalSkips, totalSkippedSequences);
            throw e;
        }
    }

    private boolean detectOnce() throws SQLException {
        Instant now = clock.instant();
        long before = mark;
        long newMark;
        Duration stalledFor = Duration.ZERO;
        Window window;
        try (Connection c = dataSource.getConnection()) {
            window = read(c, before);
        }
        highestSeen = window.highest;
        if (window.gapAt == null) {
            newMark = window.highest;
            forgetGap();
        } else {
            newMark = window.gapAt;
            if (trackedGapAt != window.gapAt) {
                trackedGapAt = window.gapAt;
                gapSeenAt = now;
            }
            Duration age = Duration.between(gapSeenAt, now);
            if (age.compareTo(ownerGrace()) >= 0) {
                Claim claim = claimOwnerlessHoles(before, now);
                if (claim.reached() != null) {
                    newMark = Math.max(newMark, claim.reached());
                    forgetGap();
                } else if (!claim.firstHoleOwned()) {
                    // filled since the first read: the next detection moves past it
                    forgetGap();
                } else if (age.compareTo(settings.getForcedGapSkipThreshold()) >= 0) {
                    long from = window.gapAt + 1;
                    long to = window.afterGap - 1;
                    LOG.error("Forcing the high water mark past sequences {}..{}: the append transaction that drew"
                            + " them has been open for {}. Events that commit into this range will not be"
                            + " projected.", from, to, age);
                    skipped(new GapSkip(from, to, "forced: its append transaction open for " + age, now));
                    newMark = to;
                    forgetGap();
                } else if (age.compareTo(settings.getStaleSequenceThreshold()) >= 0) {
                    stalledFor = age;
                    LOG.warn("High water mark held at {} for {}: the append transaction that drew sequence {} is"
                            + " open", window.gapAt, age, window.gapAt + 1);
                }
            }
        }
        boolean moved = newMark > before;
        if (moved) {
            if (newMark > persistedMark) {
                persist(newMark, now);
            }
            mark = newMark;
        }
        status = new HighWaterMarkStatus(mark, highestSeen, true, null, stalledFor, List.copyOf(recentSkips),
                totalSkips, totalSkippedSequences);
        return moved;
    }

    private Duration stalledFor(Instant now) {
        return status.stalledFor().isZero() || gapSeenAt == null ? Duration.ZERO : Duration.between(gapSeenAt, now);
    }

    private void forgetGap() {
        trackedGapAt = -1;
        gapSeenAt = null;
    }

    /**
     * How long a hole is left to its append before its owner is asked: an append registers its numbers one
     * statement after drawing them, and a hole claimed in between makes that append roll back (it is not lost, but
     * it fails), so a hole is first given one poll.
     */
    private Duration ownerGrace() {
        Duration poll = settings.getPollingInterval();
        Duration stale = settings.getStaleSequenceThreshold();
        return poll.compareTo(stale) < 0 ? poll : stale;
    }

    /**
     * What a claim reached: the sequence the mark may move to (a committed event, or the end of a claimed part of a
     * hole), or null when the first hole could not be claimed; then whether that was because its owner is open.
     */
    private record Claim(Long reached, boolean firstHoleOwned) {
    }

    /**
     * In one transaction, takes the owner locks of the holes above {@code from}, in order, until one is owned, and
     * raises the persisted mark past those it took: an append that drew one of their numbers and has not registered
     * it waits for this commit, then finds the mark above its number and rolls back. Each claimed range is re-read
     * under its locks, so an owner that committed between the list and the claim is seen (and nothing is passed).
     */
    private Claim claimOwnerlessHoles(long from, Instant now) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                List<long[]> gaps = listGaps(c, from);
                Long reached = null;
                boolean firstHoleOwned = false;
                List<GapSkip> passed = new ArrayList<>();
                long budget = MAX_CLAIMED_SEQUENCES;
                for (long[] gap : gaps) {
                    long first = gap[0] + 1;
                    long last = Math.min(gap[1] - 1, first + budget - 1);
                    boolean owned = !dialect.tryClaimSequences(c, names, sql, first, last);
                    // an owner that committed between the list and the claim: not a hole, and not a stall either
                    if (owned || countSequences(c, first, last) > 0) {
                        firstHoleOwned = owned && reached == null;
                        // the event before this hole is committed, and so is every one since the last hole passed
                        reached = reached == null ? null : gap[0];
                        break;
                    }
                    passed.add(new GapSkip(first, last,
                            "rolled back: no open transaction owns it (its owner lock was free)", now));
                    budget -= last - first + 1;
                    reached = last == gap[1] - 1 ? gap[1] : last;
                    if (budget == 0) {
                        break;
                    }
                }
                if (reached == null) {
                    c.rollback();
                    return new Claim(null, firstHoleOwned);
                }
                raiseMark(c, reached, now);
                c.commit();
                persistedMark = Math.max(persistedMark, reached);
                for (GapSkip skip : passed) {
                    skipped(skip);
                    LOG.info("High water mark moves past sequences {}..{}: rolled back appends", skip.fromSequence(),
                            skip.toSequence());
                }
                return new Claim(reached, false);
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private List<long[]> listGaps(Connection c, long from) throws SQLException {
        List<long[]> gaps = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.listGaps())) {
            ps.setLong(1, from);
            ps.setLong(2, from);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    gaps.add(new long[] {rs.getLong(1), rs.getLong(2)});
                }
            }
        }
        return gaps;
    }

    private long countSequences(Connection c, long first, long last) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.countSequences())) {
            ps.setLong(1, first);
            ps.setLong(2, last);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private void skipped(GapSkip skip) {
        totalSkips++;
        totalSkippedSequences += skip.toSequence() - skip.fromSequence() + 1;
        recentSkips.addLast(skip);
        while (recentSkips.size() > RECENT_SKIPS) {
            recentSkips.removeFirst();
        }
    }

    private record Window(Long gapAt, long afterGap, long highest) {
    }

    private Window read(Connection c, long from) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.highWaterMark())) {
            ps.setLong(1, from);
            ps.setLong(2, from);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long gapAt = rs.getLong(1);
                Long gap = rs.wasNull() ? null : gapAt;
                long afterGap = rs.getLong(2);
                long highest = rs.getLong(3);
                return new Window(gap, afterGap, highest);
            }
        }
    }

    private void persist(long newMark, Instant now) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            raiseMark(c, newMark, now);
        }
        persistedMark = newMark;
    }

    private void raiseMark(Connection c, long newMark, Instant now) throws SQLException {
        progression.raise(c, PROGRESSION_NAME, newMark, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
    }
}
