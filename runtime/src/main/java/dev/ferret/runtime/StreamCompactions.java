package dev.ferret.runtime;

import dev.ferret.EventEnvelope;
import dev.ferret.StreamCompacted;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.projections.StreamAggregates;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The stream compactions of one unit of work of one tenant, in call order, written into a transaction the caller
 * owns after its archivings and before its appends. Each locks the stream's row first, so no append to the stream
 * commits between the fold and the replacement; then it folds the live events up to the version with the snapshot
 * projection, keeps the replaced events in the archive (unless told not to), deletes all but the last and turns that
 * one into the {@link StreamCompacted} snapshot, keeping its version, numbers and timestamp. Not thread-safe: owned by
 * the session that buffers them.
 */
final class StreamCompactions {

    private record Compaction(Snapshot<?> snapshot, String streamId, long throughVersion, boolean keepReplaced) {
    }

    private final StoreContext context;
    private final ArchiveSql sql;
    private final String tenantId;
    private final List<Compaction> compactions = new ArrayList<>();

    StreamCompactions(StoreContext context, ArchiveSql sql, String tenantId) {
        this.context = context;
        this.sql = sql;
        this.tenantId = tenantId;
    }

    /** Buffers a compaction of {@code streamId}, an id already checked, folded by {@code snapshot}. */
    void add(Snapshot<?> snapshot, String streamId, long throughVersion, boolean keepReplaced) {
        if (throughVersion < 1) {
            throw new IllegalArgumentException("cannot compact stream '" + streamId + "' through version "
                    + throughVersion + ": versions start at 1");
        }
        compactions.add(new Compaction(snapshot, streamId, throughVersion, keepReplaced));
    }

    boolean isEmpty() {
        return compactions.isEmpty();
    }

    void clear() {
        compactions.clear();
    }

    /**
     * Compacts each buffered stream on {@code c}, in call order.
     *
     * @throws IllegalArgumentException naming the stream, tenant and version when a stream does not exist or has no
     *                                  live event at that version (shorter, or compacted past it); the caller's
     *                                  transaction then rolls back whatever was written before it
     */
    void write(Connection c) throws SQLException {
        for (Compaction compaction : compactions) {
            compact(c, compaction);
        }
    }

    private void compact(Connection c, Compaction compaction) throws SQLException {
        String stream = compaction.streamId();
        long through = compaction.throughVersion();
        if (update(c, sql.lockStream(), stream) == 0) {
            throw new IllegalArgumentException("cannot compact stream '" + stream + "' of tenant '" + tenantId
                    + "': it does not exist");
        }
        List<EventEnvelope> events = readThrough(c, stream, through);
        if (events.isEmpty() || events.get(events.size() - 1).version() != through) {
            throw new IllegalArgumentException("cannot compact stream '" + stream + "' of tenant '" + tenantId
                    + "' through version " + through + ": it has no live event at that version (it is shorter, or"
                    + " was compacted past it)");
        }
        if (events.size() == 1 && events.get(0).data() instanceof StreamCompacted) {
            // compacted through this very version already
            return;
        }
        Object state = StreamAggregates.foldAll(compaction.snapshot(), stream, events, context.serializer());
        String snapshot = context.serializer().toJson(new StreamCompacted(compaction.snapshot().name(), through,
                state == null ? null : context.serializer().toJson(state)));
        if (compaction.keepReplaced()) {
            try (PreparedStatement ps = c.prepareStatement(sql.copyReplacedToArchive())) {
                ps.setString(1, tenantId);
                ps.setString(2, stream);
                ps.setLong(3, through);
                ps.setString(4, context.eventTypes().aliasOf(StreamCompacted.class));
                ps.executeUpdate();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.deleteReplaced())) {
            ps.setString(1, tenantId);
            ps.setString(2, stream);
            ps.setLong(3, through);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.replaceWithSnapshot())) {
            context.dialect().bindUuid(ps, 1, UUID.randomUUID());
            ps.setString(2, context.eventTypes().aliasOf(StreamCompacted.class));
            ps.setString(3, snapshot);
            ps.setString(4, tenantId);
            ps.setString(5, stream);
            ps.setLong(6, through);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("stream '" + stream + "' of tenant '" + tenantId + "' lost its event"
                        + " at version " + through + " while it was compacted under its lock");
            }
        }
    }

    private int update(Connection c, String statement, String stream) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(statement)) {
            ps.setString(1, tenantId);
            ps.setString(2, stream);
            return ps.executeUpdate();
        }
    }

    private List<EventEnvelope> readThrough(Connection c, String stream, long through) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.selectThrough())) {
            ps.setString(1, tenantId);
            ps.setString(2, stream);
            ps.setLong(3, through);
            List<EventEnvelope> events = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(context.readEvent(rs));
                }
            }
            return events;
        }
    }
}
