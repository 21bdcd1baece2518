package dev.ferret.runtime.progression;

import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * The one owner of the progression table's rows: a shard's progression, the persisted high water mark and the
 * HotCold heartbeats all live there, and nothing else reads or writes them. Stateless and immutable: every method
 * runs its statement on the connection or database it is given, so any thread may call it.
 *
 * <p>Rows: {@code (name, last_seq_id, last_updated)}. A shard's row is advanced only from the floor its page loaded
 * ({@link #advance}); the mark's and a node's heartbeat are raised, never lowered ({@link #raise}).
 */
public final class ProgressionRows {

    private static final int LAST_SEQ_ID = 1;
    private static final int LAST_UPDATED = 2;

    private final Dialect dialect;
    private final DaemonSql sql;

    public ProgressionRows(Dialect dialect, DaemonSql sql) {
        this.dialect = dialect;
        this.sql = sql;
    }

    /** Where a row stands and when it was written: what a page whose commit outcome is unknown is compared with. */
    public record Stamped(long lastSeqId, OffsetDateTime lastUpdated) {
    }

    /** The row's position, or empty when it does not exist. */
    public OptionalLong find(DataSource database, String name) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(LAST_SEQ_ID)) : OptionalLong.empty();
            }
        }
    }

    /** The row's position, 0 when it does not exist. */
    public long read(DataSource database, String name) throws SQLException {
        return find(database, name).orElse(0);
    }

    /** The highest position of the rows {@code names}; 0 when none exists. One connection for all. */
    public long highest(DataSource database, List<String> names) throws SQLException {
        long highest = 0;
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            for (String name : names) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        highest = Math.max(highest, rs.getLong(LAST_SEQ_ID));
                    }
                }
            }
        }
        return highest;
    }

    /** The row's position with its last_updated, read on a fresh connection; empty when it does not exist. */
    public Optional<Stamped> readStamped(DataSource database, String name) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgressionStamp())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Stamped(rs.getLong(LAST_SEQ_ID),
                        rs.getObject(LAST_UPDATED, OffsetDateTime.class)));
            }
        }
    }

    /**
     * Moves a shard's row from {@code floor} to {@code end}, inside the page's transaction on {@code c}, after
     * {@code before} (a statement without parameters, or empty): false when it was elsewhere (another runner
     * advanced it, or created it first).
     */
    public boolean advance(Connection c, String name, long floor, long end, OffsetDateTime now, String before)
            throws SQLException {
        return dialect.advanceProgression(c, sql, name, floor, end, now, before);
    }

    /** Every progression row of {@code database}, by name, with one statement. */
    public Map<String, Long> every(DataSource database) throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectEveryProgression());
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getLong(2));
            }
        }
        return rows;
    }

    /** Creates the row or raises it to {@code to}, never lowers it, on {@code c}. */
    public void raise(Connection c, String name, long to, OffsetDateTime now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.raiseMark())) {
            ps.setString(1, name);
            ps.setLong(2, to);
            ps.setObject(3, now);
            ps.executeUpdate();
        }
    }

    /** {@link #raise(Connection, String, long, OffsetDateTime)} on a connection of its own. */
    public void raise(DataSource database, String name, long to, OffsetDateTime now) throws SQLException {
        try (Connection c = database.getConnection()) {
            raise(c, name, to, now);
        }
    }

    /** Deletes the row, on {@code c}; false when there was none. */
    public boolean delete(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.deleteProgression())) {
            ps.setString(1, name);
            return ps.executeUpdate() > 0;
        }
    }

    /** {@link #delete(Connection, String)} on a connection of its own. */
    public void delete(DataSource database, String name) throws SQLException {
        try (Connection c = database.getConnection()) {
            delete(c, name);
        }
    }

    /** How many HotCold nodes wrote their heartbeat row at or after {@code cutOffMillis}. */
    public int countLiveNodes(DataSource database, long cutOffMillis) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.countLiveNodes())) {
            ps.setLong(1, cutOffMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Deletes the heartbeat rows older than {@code cutOffMillis}; returns how many. */
    public int deleteDeadNodes(DataSource database, long cutOffMillis) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.deleteDeadNodes())) {
            ps.setLong(1, cutOffMillis);
            return ps.executeUpdate();
        }
    }
}
