package dev.ferret.runtime.events;

import dev.ferret.StreamArchived;
import dev.ferret.runtime.dialect.ArchiveSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The archivings and unarchivings of one unit of work of one tenant, in call order, written into a transaction the
 * caller owns before its appends (so the marker events those appends carry stay live). Each first sets the stream's
 * mark, which locks the stream's row until the transaction ends: an append to the stream, which moves the same row,
 * waits, so no event commits between the copy of the stream's rows and their delete. Not thread-safe: owned by the
 * session that buffers them.
 */
public final class StreamArchives {

    private record Move(String streamId, boolean archive) {
    }

    private final ArchiveSql sql;
    private final String tenantId;
    /** The alias {@link StreamArchived} events are stored under. */
    private final String markerType;
    private final List<Move> moves = new ArrayList<>();

    public StreamArchives(ArchiveSql sql, String tenantId, EventTypes types) {
        this.sql = sql;
        this.tenantId = tenantId;
        this.markerType = types.aliasOf(StreamArchived.class);
    }

    /** Buffers the archiving ({@code archive}) or unarchiving of {@code streamId}, an id already checked. */
    public void add(String streamId, boolean archive) {
        moves.add(new Move(streamId, archive));
    }

    public boolean isEmpty() {
        return moves.isEmpty();
    }

    public void clear() {
        moves.clear();
    }

    /**
     * Moves each buffered stream's events on {@code c}, in call order.
     *
     * @throws IllegalArgumentException naming the stream and tenant when a stream does not exist; the caller's
     *                                  transaction then rolls back whatever was moved before it
     */
    public void write(Connection c) throws SQLException {
        for (Move move : moves) {
            if (!mark(c, move)) {
                throw new IllegalArgumentException("cannot " + (move.archive() ? "archive" : "unarchive")
                        + " stream '" + move.streamId() + "' of tenant '" + tenantId + "': it does not exist");
            }
            if (move.archive()) {
                run(c, sql.copyToArchive(), move.streamId(), null);
                run(c, sql.deleteFromLive(), move.streamId(), null);
            } else {
                // the markers of earlier archivings change places with the rest: a rebuild after unarchiving sees
                // the stream as if it had never been archived
                run(c, sql.copyMarkersToArchive(), move.streamId(), markerType);
                run(c, sql.deleteMarkersFromLive(), move.streamId(), markerType);
                run(c, sql.copyToLive(), move.streamId(), markerType);
                run(c, sql.deleteFromArchive(), move.streamId(), markerType);
            }
        }
    }

    private boolean mark(Connection c, Move move) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.markStream())) {
            ps.setBoolean(1, move.archive());
            ps.setString(2, tenantId);
            ps.setString(3, move.streamId());
            return ps.executeUpdate() == 1;
        }
    }

    /** Runs {@code statement} for the stream, and the marker type when it takes one. */
    private void run(Connection c, String statement, String streamId, String type) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(statement)) {
            ps.setString(1, tenantId);
            ps.setString(2, streamId);
            if (type != null) {
                ps.setString(3, type);
            }
            ps.executeUpdate();
        }
    }
}
