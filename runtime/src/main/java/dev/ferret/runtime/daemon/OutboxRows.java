package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.projections.PageBatch.PublishedMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * One shard's rows in the outbox table: written in a page's transaction, read in id order, marked delivered or
 * failed, counted, and the database's delivered rows deleted past the retention. Every statement runs on the
 * connection it is given; holds no state, so the page loop and the one delivery run in flight use it side by side.
 */
final class OutboxRows {

    /** Delivered rows one clean-up statement deletes at most. */
    static final int DELETE_BATCH = 1_000;

    /** A row waiting for delivery. */
    record Row(long id, UUID messageId, long sequence, String tenantId, String type, String payload) {
    }

    /** What is waiting: how many rows, and since when the oldest (null when none). */
    record Count(long undelivered, Instant oldest) {
    }

    private final String shard;
    private final StoreContext context;
    private final OutboxSql sql;

    OutboxRows(String shard, StoreContext context, OutboxSql sql) {
        this.shard = shard;
        this.context = context;
        this.sql = sql;
    }

    /** Inserts the page's messages in its transaction; returns each one's new id with the message. */
    Map<UUID, Object> insert(Connection c, List<PublishedMessage> messages, OffsetDateTime now) throws SQLException {
        Map<UUID, Object> written = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql.insert())) {
            for (PublishedMessage message : messages) {
                UUID id = UUID.randomUUID();
                context.dialect().bindUuid(ps, 1, id);
                ps.setString(2, shard);
                ps.setLong(3, message.sequence());
                ps.setString(4, message.tenantId());
                ps.setString(5, message.message().getClass().getName());
                ps.setString(6, context.serializer().toJson(message.message()));
                ps.setObject(7, now);
                ps.addBatch();
                written.put(id, message.message());
            }
            ps.executeBatch();
        }
        return written;
    }

    /** The next {@code limit} undelivered rows, in id order (the shard's publish order). */
    List<Row> undelivered(Connection c, int limit) throws SQLException {
        List<Row> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.selectUndelivered())) {
            ps.setString(1, shard);
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new Row(rs.getLong(1), UUID.fromString(rs.getString(2)), rs.getLong(3), rs.getString(4),
                            rs.getString(5), rs.getString(6)));
                }
            }
        }
        return rows;
    }

    void recordFailure(Connection c, Row row, String why) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.recordFailure())) {
            ps.setString(1, why);
            ps.setLong(2, row.id());
            ps.executeUpdate();
        }
    }

    void markDelivered(Connection c, Row row) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.markDelivered())) {
            ps.setObject(1, OffsetDateTime.now(context.clock()));
            ps.setLong(2, row.id());
            ps.executeUpdate();
        }
    }

    Count count(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.countUndelivered())) {
            ps.setString(1, shard);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                OffsetDateTime oldest = rs.getObject(2, OffsetDateTime.class);
                return new Count(rs.getLong(1), oldest == null ? null : oldest.toInstant());
            }
        }
    }

    /**
     * Deletes the database's rows delivered before {@code cutOff}, in bounded batches, each its own statement so
     * that none holds locks on much of the table, while {@code goOn} says so; returns how many.
     */
    long deleteDelivered(Connection c, OffsetDateTime cutOff, BooleanSupplier goOn) throws SQLException {
        long total = 0;
        try (PreparedStatement ps = c.prepareStatement(sql.deleteDelivered())) {
            int deleted;
            do {
                ps.setObject(1, cutOff);
                ps.setInt(2, DELETE_BATCH);
                deleted = ps.executeUpdate();
                total += Math.max(0, deleted);
            } while (deleted >= DELETE_BATCH && goOn.getAsBoolean());
        }
        return total;
    }
}
