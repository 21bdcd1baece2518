package dev.ferret.runtime.events;

import dev.ferret.ConcurrencyException;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.ArrayColumn;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Moves the head row of every stream a unit of work appends to, checking each append's expected version: the rows
 * serialize writers per stream, and a version that moved first is a {@link ConcurrencyException} naming the stream.
 */
final class StreamHeads {

    private final Dialect dialect;
    private final EventSql sql;
    private final DataSource dataSource;
    private final String tenantId;

    StreamHeads(Dialect dialect, EventSql sql, DataSource dataSource, String tenantId) {
        this.dialect = dialect;
        this.sql = sql;
        this.dataSource = dataSource;
        this.tenantId = tenantId;
    }

    /**
     * Moves the head of every appended stream and returns, per append in call order, the versions it writes. Where
     * no stream is appended twice, in a constant number of statements: the appends to any version in one multi-row
     * upsert (its rows bound by {@link Dialect#bindColumns}), new streams in one batch of inserts, expected versions in
     * one batch of conditional updates. Otherwise one statement per append, in call order.
     */
    List<AppendedRange> write(Connection c, List<StreamAppend> appends, OffsetDateTime now) throws SQLException {
        List<AppendedRange> ranges = new ArrayList<>(appends.size());
        boolean distinct = appends.stream().map(StreamAppend::streamId).distinct().count() == appends.size();
        if (appends.size() == 1 || !distinct || sql.upsertStreamsOfMany().isEmpty()) {
            for (StreamAppend append : appends) {
                ranges.add(range(append, writeStream(c, append, now)));
            }
            return ranges;
        }
        Map<String, Long> heads = new HashMap<>();
        upsertAnyVersionStreams(c, appends, now, heads);
        insertNewStreams(c, appends, now, heads);
        advanceExpectedStreams(c, appends, now, heads);
        for (StreamAppend append : appends) {
            ranges.add(range(append, heads.get(append.streamId())));
        }
        return ranges;
    }

    private static AppendedRange range(StreamAppend append, long headVersion) {
        return new AppendedRange(append.streamId(), headVersion - append.events().size() + 1, headVersion);
    }

    /** The appends to any version, in one upsert that returns each stream's new head. */
    private void upsertAnyVersionStreams(Connection c, List<StreamAppend> appends, OffsetDateTime now, Map<String, Long> heads)
            throws SQLException {
        List<StreamAppend> any = appends.stream().filter(a -> a.expectedVersion() == StreamAppend.ANY_VERSION).toList();
        if (any.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.upsertStreamsOfMany())) {
            ps.setString(1, tenantId);
            ps.setObject(2, now);
            ps.setObject(3, now);
            dialect.bindColumns(c, ps, 4, upsertColumns(any));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    heads.put(rs.getString(1), rs.getLong(2));
                }
            }
        } catch (SQLException e) {
            if (dialect.isUniqueViolation(e)) {
                // two writers created a stream at once; the engine's upsert let both try the insert
                throw conflict(c, sql, tenantId, any.get(0), "another writer created one of the unit of work's "
                        + any.size() + " new or appended streams at the same time");
            }
            throw e;
        }
    }

    /** The columns (id, type, n: the count of events appended) of {@code upsertStreamsOfMany}. */
    static List<ArrayColumn> upsertColumns(List<StreamAppend> appends) {
        return List.of(new ArrayColumn("id", "varchar", appends.stream().map(StreamAppend::streamId).toList()),
                new ArrayColumn("type", "varchar", appends.stream().map(StreamAppend::aggregateType).toList()),
                new ArrayColumn("n", "bigint", appends.stream().map(a -> (long) a.events().size()).toList()));
    }

    /** New streams ({@code startStream}, expected version 0), in one batch of inserts. */
    private void insertNewStreams(Connection c, List<StreamAppend> appends, OffsetDateTime now, Map<String, Long> heads) throws SQLException {
        List<StreamAppend> created = appends.stream().filter(a -> a.expectedVersion() == 0).toList();
        if (created.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.insertStream())) {
            for (StreamAppend append : created) {
                bindStreamRow(ps, append, append.events().size(), now);
                ps.addBatch();
            }
            ps.executeBatch();
        } catch (SQLException e) {
            if (dialect.isUniqueViolation(e)) {
                throw conflict(c, sql, tenantId, firstExisting(created), "it already exists");
            }
            throw e;
        }
        created.forEach(append -> heads.put(append.streamId(), (long) append.events().size()));
    }

    /**
     * Which of {@code created} exists, asked on a connection of its own: the batch's transaction may be aborted
     * (PostgreSQL), and drivers disagree on which entries of a failed batch they report. The stream that made the
     * insert fail was committed by then (the engine waited for its writer), so it is seen; the first append when none
     * is.
     */
    private StreamAppend firstExisting(List<StreamAppend> created) {
        try (Connection lookup = dataSource.getConnection();
             PreparedStatement ps = lookup.prepareStatement(sql.selectStream())) {
            for (StreamAppend append : created) {
                ps.setString(1, tenantId);
                ps.setString(2, append.streamId());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return append;
                    }
                }
            }
        } catch (SQLException e) {
            // naming the stream is a courtesy; the conflict is the news
        }
        return created.get(0);
    }

    /** Appends at an expected version, in one batch of updates that each move a stream only from that version. */
    private void advanceExpectedStreams(Connection c, List<StreamAppend> appends, OffsetDateTime now, Map<String, Long> heads)
            throws SQLException {
        List<StreamAppend> expected = appends.stream().filter(a -> a.expectedVersion() > 0).toList();
        if (expected.isEmpty()) {
            return;
        }
        int[] moved;
        try (PreparedStatement ps = c.prepareStatement(sql.advanceStream())) {
            for (StreamAppend append : expected) {
                bindAdvance(ps, append, now);
                ps.addBatch();
            }
            moved = ps.executeBatch();
        }
        for (int i = 0; i < expected.size(); i++) {
            StreamAppend append = expected.get(i);
            if (moved[i] != 1) {
                throw conflict(c, sql, tenantId, append, "another writer moved it first or it does not exist");
            }
            heads.put(append.streamId(), append.expectedVersion() + append.events().size());
        }
    }

    private void bindAdvance(PreparedStatement ps, StreamAppend append, OffsetDateTime now) throws SQLException {
        ps.setLong(1, append.expectedVersion() + append.events().size());
        ps.setObject(2, now);
        ps.setString(3, tenantId);
        ps.setString(4, append.streamId());
        ps.setLong(5, append.expectedVersion());
    }

    /** Moves the stream's head and returns its version afterwards. */
    private long writeStream(Connection c, StreamAppend append, OffsetDateTime now) throws SQLException {
        int count = append.events().size();
        long newVersion;
        if (append.expectedVersion() == 0) {
            try (PreparedStatement ps = c.prepareStatement(sql.insertStream())) {
                bindStreamRow(ps, append, count, now);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (dialect.isUniqueViolation(e)) {
                    throw conflict(c, sql, tenantId, append, "it already exists");
                }
                throw e;
            }
            newVersion = count;
        } else if (append.expectedVersion() > 0) {
            newVersion = append.expectedVersion() + count;
            try (PreparedStatement ps = c.prepareStatement(sql.advanceStream())) {
                bindAdvance(ps, append, now);
                if (ps.executeUpdate() != 1) {
                    throw conflict(c, sql, tenantId, append, "another writer moved it first or it does not exist");
                }
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(sql.upsertStream())) {
                bindStreamRow(ps, append, count, now);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    newVersion = rs.getLong(1);
                }
            } catch (SQLException e) {
                if (dialect.isUniqueViolation(e)) {
                    // two writers created the stream at once; the engine's upsert let both try the insert
                    throw conflict(c, sql, tenantId, append, "another writer created it at the same time");
                }
                throw e;
            }
        }
        return newVersion;
    }

    /** (id, tenant_id, type, version or count, timestamp, created) of a stream row. */
    private void bindStreamRow(PreparedStatement ps, StreamAppend append, int count, OffsetDateTime now)
            throws SQLException {
        ps.setString(1, append.streamId());
        ps.setString(2, tenantId);
        ps.setString(3, append.aggregateType());
        ps.setLong(4, count);
        ps.setObject(5, now);
        ps.setObject(6, now);
    }

    static ConcurrencyException conflict(Connection c, EventSql sql, String tenantId, StreamAppend append,
                                         String reason) {
        long actual = -1;
        try (PreparedStatement ps = c.prepareStatement(sql.selectStream())) {
            ps.setString(1, tenantId);
            ps.setString(2, append.streamId());
            try (ResultSet rs = ps.executeQuery()) {
                actual = rs.next() ? rs.getLong(1) : 0;
            }
        } catch (SQLException e) {
            // the conflict is the news; the actual version is a courtesy (PostgreSQL aborts the transaction)
        }
        String expected = append.expectedVersion() == StreamAppend.ANY_VERSION ? "any version"
                : append.start() ? "a new stream" : "version " + append.expectedVersion();
        return new ConcurrencyException(append.streamId(), append.expectedVersion(), actual,
                "cannot append " + append.events().size() + " events to stream '" + append.streamId()
                        + "' of tenant '" + tenantId + "': expected " + expected
                        + (actual >= 0 ? ", found version " + actual : "") + " (" + reason + "); nothing was saved");
    }
}
