package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.events.EventRows;
import dev.ferret.runtime.projections.ProjectionApplier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * Reads one shard's pages from its {@link LogPartition}: the events its projection wants, the ones it cannot read
 * (for the dead letters), and for a tenant's page each event's number in the tenant's sequence. Immutable; called
 * only by the shard's one loop run in flight.
 */
final class PageReader {

    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final StoreContext context;
    private final DaemonSql sql;
    private final DataSource dataSource;

    PageReader(ProjectionApplier applier, LogPartition partition, ShardParts parts) {
        this.applier = applier;
        this.partition = partition;
        this.context = parts.context();
        this.sql = parts.sql();
        this.dataSource = partition.database().dataSource();
    }

    /**
     * Reads the page of {@code (from, to]}, at most {@code limit} rows of the log; {@code inFlight} is told the connection while the page
     * reads (so a drain can abort it) and null once it went back to the pool.
     */
    LoadedPage load(long from, long to, int limit, Consumer<Connection> inFlight) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            inFlight.accept(c);
            try {
                return read(c, from, to, limit);
            } finally {
                // before the connection goes back to the pool, where it may be lent to someone else: a drain's abort
                // must never reach it (a try-with-resources closes its resources before its own finally runs)
                inFlight.accept(null);
            }
        }
    }

    /**
     * The page of the one event at store-wide {@code sequence}, whatever the partition, for a dead letter's replay:
     * empty when the projection no longer wants its type or the event is gone.
     */
    LoadedPage loadEvent(long sequence) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return read(c, sql.loadPage(), false, sequence - 1, sequence, 1);
        }
    }

    private LoadedPage read(Connection c, long from, long to, int limit) throws SQLException {
        boolean perTenant = partition.perTenant();
        return read(c, perTenant ? sql.loadTenantPage() : sql.loadPage(), perTenant, from, to, limit);
    }

    private LoadedPage read(Connection c, String statement, boolean perTenant, long from, long to, int limit)
            throws SQLException {
        List<EventEnvelope> events = new ArrayList<>();
        List<DeadLetter> unreadable = new ArrayList<>();
        Map<Long, Long> tenantNumbers = perTenant ? new HashMap<>() : Map.of();
        long lastRow = from;
        int rows = 0;
        // a tenant's page is read in its own sequence, which rides in a ninth column; the store's in seq_id
        int position = perTenant ? EventRows.TENANT_SEQUENCE : EventRows.SEQUENCE;
        try (PreparedStatement ps = c.prepareStatement(statement)) {
            int i = 1;
            if (perTenant) {
                ps.setString(i++, partition.tenantId());
            }
            ps.setLong(i++, from);
            ps.setLong(i++, to);
            ps.setInt(i, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    lastRow = rs.getLong(position);
                    if (perTenant) {
                        tenantNumbers.put(rs.getLong(EventRows.SEQUENCE), lastRow);
                    }
                    String alias = rs.getString(EventRows.TYPE);
                    if (!applier.wants(context.eventTypes().currentAlias(alias))) {
                        continue;
                    }
                    try {
                        events.add(context.readEvent(rs));
                    } catch (RuntimeException e) {
                        // an unknown alias, or JSON that no longer fits its type (another app version wrote it)
                        unreadable.add(new DeadLetter(rs.getLong(EventRows.SEQUENCE),
                                UUID.fromString(rs.getString(EventRows.ID)), alias, rs.getString(EventRows.STREAM),
                                rs.getString(EventRows.TENANT), e));
                    }
                }
            }
        }
        // a short page read everything up to the mark: holes below it are permanent, so the shard reaches it
        long end = rows < limit ? to : lastRow;
        return new LoadedPage(from, end, events, unreadable, tenantNumbers, rows);
    }
}
