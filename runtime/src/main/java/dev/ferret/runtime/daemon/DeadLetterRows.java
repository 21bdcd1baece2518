package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DeadLetterEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/** The operator's reads and deletes of a shard's dead letters, in its partition's database. Stateless. */
final class DeadLetterRows {

    private DeadLetterRows() {
    }

    static List<DeadLetterEvent> page(ShardParts parts, DataSource dataSource, String shard, long afterId, int limit)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(parts.deadLetterSql().list())) {
            ps.setString(1, shard);
            ps.setLong(2, afterId);
            ps.setInt(3, limit);
            return read(ps);
        }
    }

    static Optional<DeadLetterEvent> one(ShardParts parts, DataSource dataSource, String shard, long id)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(parts.deadLetterSql().one())) {
            ps.setString(1, shard);
            ps.setLong(2, id);
            return read(ps).stream().findFirst();
        }
    }

    /** Adds each shard's count in {@code dataSource} to {@code counts}. */
    static void count(ShardParts parts, DataSource dataSource, Map<String, Long> counts) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(parts.deadLetterSql().counts());
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                counts.merge(rs.getString(1), rs.getLong(2), Long::sum);
            }
        }
    }

    /** Deletes one dead letter on {@code c}, in its transaction; whether it was there. */
    static boolean delete(Connection c, ShardParts parts, String shard, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(parts.deadLetterSql().delete())) {
            ps.setString(1, shard);
            ps.setLong(2, id);
            return ps.executeUpdate() == 1;
        }
    }

    private static List<DeadLetterEvent> read(PreparedStatement ps) throws SQLException {
        List<DeadLetterEvent> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(new DeadLetterEvent(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(9),
                        rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7),
                        rs.getObject(8, OffsetDateTime.class), rs.getString(10)));
            }
        }
        return rows;
    }
}
