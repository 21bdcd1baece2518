package dev.ferret.runtime.daemon.hwm;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes the high water mark: the highest sequence below which no hole can still fill.
 *
 * <p>Identity values are drawn outside transactions, so a hole is either a rolled-back append (permanent) or one
 * still in flight (it will fill). The mark stops before the first hole. Once a hole has stayed longer than the
 * stale threshold, the detector takes the append fence exclusively: every append transaction holds it shared from
 * before its first insert until it ends, so holding it proves no open transaction can still fill a hole, and the
 * re-read under it may move past every hole it sees. When the fence cannot be had (an append transaction stays
 * open), the mark holds and the stall is reported; only past the forced-skip threshold is the hole skipped, loudly.
 *
 * <p>All state is owned by the single thread that calls {@link #detect()}; {@link #mark()} and {@link #status()}
 * publish it to other threads.
 */
public final class HighWaterMarkDetector {

    private static final Logger LOG = LoggerFactory.getLogger(HighWaterMarkDetector.class);

    /** The progression row the mark is persisted in, so a restart does not wait on old holes again. */
    public static final String PROGRESSION_NAME = "HighWaterMark";
    private static final int RECENT_SKIPS = 20;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final TableNames names;
    private final DaemonSql sql;
    private final DaemonSettings settings;
    private final Clock clock;

    private volatile long mark;
    private volatile HighWaterMarkStatus status;

    private long highestSeen;
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
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            ps.setString(1, PROGRESSION_NAME);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    mark = rs.getLong(1);
                    highestSeen = mark;
                }
            }
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
            if (age.compareTo(settings.getStaleSequenceThreshold()) >= 0) {
                Long fenced = readUnderFence(window.gapAt, now);
                if (fenced != null) {
                    newMark = Math.max(newMark, fenced);
                    forgetGap();
                } else if (age.compareTo(settings.getForcedGapSkipThreshold()) >= 0) {
                    long from = window.gapAt + 1;
                    long to = window.afterGap - 1;
                    LOG.error("Forcing the high water mark past sequences {}..{}: the append fence has been"
                            + " unavailable for {} (an append transaction stays open). Events that commit into this"
                            + " range will not be projected.", from, to, age);
                    skipped(new GapSkip(from, to, "forced: append fence unavailable for " + age, now));
                    newMark = to;
                    forgetGap();
                } else {
                    stalledFor = age;
                    LOG.warn("High water mark held at {} for {}: an append transaction that may still fill"
                            + " sequences from {} is open", window.gapAt, age, window.gapAt + 1);
                }
            }
        }
        boolean moved = newMark > before;
        if (moved) {
            persist(newMark, now);
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
     * Takes the append fence and re-reads under it. Returns the highest sequence then, below which every hole is
     * permanent, or null when the fence could not be had in time.
     */
    private Long readUnderFence(long gapAt, Instant now) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            Runnable release = null;
            try {
                release = dialect.tryTakeAppendFenceExclusive(c, names, settings.getAppendFenceTimeout());
                if (release == null) {
                    c.rollback();
                    return null;
                }
                List<long[]> gaps = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(sql.listGaps())) {
                    ps.setLong(1, gapAt);
                    ps.setLong(2, gapAt);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            gaps.add(new long[] {rs.getLong(1), rs.getLong(2)});
                        }
                    }
                }
                long highest = read(c, gapAt).highest;
                c.commit();
                for (long[] gap : gaps) {
                    skipped(new GapSkip(gap[0] + 1, gap[1] - 1,
                            "rolled back: no open append transaction could fill it (append fence held)", now));
                    LOG.info("High water mark moves past sequences {}..{}: rolled back appends", gap[0] + 1,
                            gap[1] - 1);
                }
                return highest;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                if (release != null) {
                    release.run();
                }
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
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.raiseMark())) {
            ps.setString(1, PROGRESSION_NAME);
            ps.setLong(2, newMark);
            ps.setObject(3, OffsetDateTime.ofInstant(now, java.time.ZoneOffset.UTC));
            ps.executeUpdate();
        }
    }
}
