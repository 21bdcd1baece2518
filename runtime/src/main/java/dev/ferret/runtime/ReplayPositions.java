package dev.ferret.runtime;

import dev.ferret.runtime.dialect.ReplicaSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Reads the write-ahead log positions {@link ReplicaReads} compares: the primary's after a non-stale wait, the
 * replica's replayed one. A seam of its own so the routing decisions are tested without servers.
 */
interface ReplayPositions {

    /** What {@link #replayed} answers for a server that is not replaying: below every position. */
    long NOT_REPLAYING = Long.MIN_VALUE;

    /** The primary's current write position: every commit before the call lies at or below it. */
    long primary(DataSource primary) throws SQLException;

    /** The position the replica has replayed through, or {@link #NOT_REPLAYING}. */
    long replayed(DataSource replica) throws SQLException;

    /** The positions {@code sql} reads. */
    static ReplayPositions of(ReplicaSql sql) {
        return new ReplayPositions() {
            @Override
            public long primary(DataSource primary) throws SQLException {
                return read(primary, sql.primaryPosition());
            }

            @Override
            public long replayed(DataSource replica) throws SQLException {
                return read(replica, sql.replayedPosition());
            }
        };
    }

    private static long read(DataSource dataSource, String statement) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(statement);
             ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return NOT_REPLAYING;
            }
            long position = rs.getLong(1);
            return rs.wasNull() ? NOT_REPLAYING : position;
        }
    }
}
