package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ApplyFailedException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** An event quarantined by {@code skipApplyErrors}, written in the page's transaction. */
record DeadLetter(long sequence, UUID eventId, String typeName, String streamId, String tenantId, Throwable error) {

    /** Inserts {@code deadLetters} of {@code shard} on the page's connection {@code c}, in its transaction. */
    static void insert(Connection c, ShardParts parts, String shard, List<DeadLetter> deadLetters, OffsetDateTime now)
            throws SQLException {
        if (deadLetters.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(parts.sql().insertDeadLetter())) {
            for (DeadLetter dead : deadLetters) {
                Throwable cause = dead.error() instanceof ApplyFailedException && dead.error().getCause() != null
                        ? dead.error().getCause() : dead.error();
                ps.setString(1, shard);
                ps.setLong(2, dead.sequence());
                parts.context().dialect().bindUuid(ps, 3, dead.eventId());
                ps.setString(4, dead.typeName());
                ps.setString(5, dead.tenantId());
                ps.setString(6, cause.getClass().getName());
                ps.setString(7, String.valueOf(cause.getMessage()));
                ps.setObject(8, now);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }
}
