package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.events.EventRows;
import dev.ferret.runtime.events.StoredEvent;
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
 * (for the dead letters), and for a tenant's page each event's number in the tenant's sequence. The rows come from
 * {@link SharedLoads}, so the shards reading the same slice from the same floor read it once. Immutable; called only
 * by the shard's one loop run in flight.
 */
final class PageReader {

    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final StoreContext context;
    private final DaemonSql sql;
    private final DataSource dataSource;
    private final DatabaseLimits limits;
    private final SharedLoads loads;

    PageReader(ProjectionApplier applier, LogPartition partition, ShardParts parts) {
        this.applier = applier;
        this.partition = partition;
        this.context = parts.context();
        this.sql = parts.sql();
        this.dataSource = partition.database().dataSource();
        this.limits = parts.limits();
        this.loads = parts.loads();
    }

    /**
     * Reads the page of {@code (from, to]}, at most {@code limit} rows of the log, within the database's bound on
     * concurrent loads; {@code inFlight} is told the connection while this shard reads it (so a drain can abort it)
     * and null once it went back to the pool.
     */
    LoadedPage load(long from, long to, int limit, Consumer<Connection> inFlight) throws SQLException {
        SharedPage rows = loads.load(partition, from, to, limit,
                () -> limits.loading(partition.database(), () -> readRows(from, to, limit, inFlight)));
        return select(rows, limit, partition.perTenant());
    }

    private SharedPage readRows(long from, long to, int limit, Consumer<Connection> inFlight) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            inFlight.accept(c);
            try {
                boolean perTenant = partition.perTenant();
                return read(c, perTenant ? sql.loadTenantPage() : sql.loadPage(), perTenant, from, to, limit);
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
            return select(read(c, sql.loadPage(), false, sequence - 1, sequence, 1), 1, false);
        }
    }

    private SharedPage read(Connection c, String statement, boolean perTenant, long from, long to, int limit)
            throws SQLException {
        List<SharedPage.Row> rows = new ArrayList<>();
        // a tenant's page is read in its own sequence, which rides in a twelfth column; the store's in seq_id
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
                    rows.add(new SharedPage.Row(EventRows.stored(rs), rs.getLong(position)));
                }
            }
        }
        return new SharedPage(from, to, limit, rows);
    }

    /**
     * This projection's part of {@code page}, read with at most {@code limit} rows; {@code perTenant} when its rows'
     * positions are the tenant's numbers.
     */
    private LoadedPage select(SharedPage page, int limit, boolean perTenant) {
        List<EventEnvelope> events = new ArrayList<>();
        List<DeadLetter> unreadable = new ArrayList<>();
        Map<Long, Long> tenantNumbers = perTenant ? new HashMap<>() : Map.of();
        long lastRow = page.from();
        for (SharedPage.Row row : page.rows()) {
            StoredEvent stored = row.stored;
            lastRow = row.position;
            if (perTenant) {
                tenantNumbers.put(stored.sequence(), row.position);
            }
            if (!applier.wants(context.eventTypes().currentAlias(stored.alias()))) {
                continue;
            }
            try {
                events.add(row.event(context));
            } catch (RuntimeException e) {
                // an unknown alias, or JSON that no longer fits its type (another app version wrote it)
                unreadable.add(new DeadLetter(stored.sequence(), UUID.fromString(stored.id()), stored.alias(),
                        stored.streamId(), stored.tenantId(), e));
            }
        }
        int rows = page.rows().size();
        // a short page read everything up to the mark: holes below it are permanent, so the shard reaches it
        long end = rows < limit ? page.to() : lastRow;
        return new LoadedPage(page.from(), end, events, unreadable, tenantNumbers, rows);
    }
}
