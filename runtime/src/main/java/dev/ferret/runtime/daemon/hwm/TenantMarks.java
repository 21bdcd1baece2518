package dev.ferret.runtime.daemon.hwm;

import dev.ferret.runtime.dialect.DaemonSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The high water marks of one database's tenants, when events are partitioned by tenant. A tenant's numbers are
 * drawn under its sequence row's lock inside the append transaction, so they have no holes and commit in order:
 * its committed last number is its mark, with no gap to wait on. One statement reads every tenant's mark.
 *
 * <p>Written only by the daemon's scheduler thread ({@link #refresh()}); the marks are published as an immutable
 * map for agents, status and waiters, with the last failure and the time of the last good read, so one database's
 * outage shows as that database's and holds only its own tenants.
 */
public final class TenantMarks {

    private static final Logger LOG = LoggerFactory.getLogger(TenantMarks.class);

    private final String database;
    private final DataSource dataSource;
    private final DaemonSql sql;
    private final Clock clock;
    private volatile Map<String, Long> marks = Map.of();
    /** The tenants' marks as cells their holders read in one step; raised by each read, created on request. */
    private final ConcurrentMap<String, AtomicLong> cells = new ConcurrentHashMap<>();
    private volatile boolean read;
    private volatile Instant lastGoodRead;
    /** The last read's failure, naming the database; null while reads succeed. */
    private volatile SQLException error;

    public TenantMarks(String database, DataSource dataSource, DaemonSql sql, Clock clock) {
        this.database = database;
        this.dataSource = dataSource;
        this.sql = sql;
        this.clock = clock;
    }

    public String database() {
        return database;
    }

    /**
     * Reads every tenant's mark and returns the tenants whose mark moved since the last read, new tenants
     * included. A tenant the engine skipped (its row locked by an append in flight) keeps its mark.
     */
    public Map<String, Long> refresh() throws SQLException {
        try {
            Map<String, Long> moved = read();
            if (error != null) {
                LOG.info("Tenant database '{}' can be read again", database);
            }
            error = null;
            lastGoodRead = clock.instant();
            return moved;
        } catch (SQLException e) {
            if (error == null) {
                LOG.warn("Tenant database '{}' cannot be read; its tenants' marks hold until it can: {}", database,
                        e.toString());
            }
            error = new SQLException("tenant database '" + database + "' cannot be read"
                    + (lastGoodRead == null ? "" : " (last read " + lastGoodRead + ")") + ": " + e.getMessage(),
                    e.getSQLState(), e.getErrorCode(), e);
            throw error;
        }
    }

    private Map<String, Long> read() throws SQLException {
        Map<String, Long> before = marks;
        Map<String, Long> after = new HashMap<>(before);
        Map<String, Long> moved = new LinkedHashMap<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.tenantMarks());
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String tenant = rs.getString(1);
                long mark = rs.getLong(2);
                Long previous = before.get(tenant);
                if (previous == null || mark > previous) {
                    after.put(tenant, mark);
                    moved.put(tenant, mark);
                }
            }
        }
        if (!moved.isEmpty()) {
            marks = Map.copyOf(after);
            moved.forEach((tenant, mark) -> {
                AtomicLong cell = cells.get(tenant);
                if (cell != null) {
                    cell.accumulateAndGet(mark, Math::max);
                }
            });
        }
        read = true;
        return moved;
    }

    /** The tenant's mark as last read; 0 for a tenant not seen yet. */
    public long markOf(String tenantId) {
        return marks.getOrDefault(tenantId, 0L);
    }

    /**
     * The tenant's mark as a cell that follows the reads, for a reader that asks often and wants no lookup (a status
     * over tens of thousands of shards). Marks only rise, and both a read and the cell's creation raise it, so it
     * never lags the map for long, whichever came first.
     */
    public LongSupplier cellOf(String tenantId) {
        AtomicLong cell = cells.computeIfAbsent(tenantId, t -> new AtomicLong());
        cell.accumulateAndGet(markOf(tenantId), Math::max);
        return cell::get;
    }

    /** Every tenant's mark as last read. */
    public Map<String, Long> marks() {
        return marks;
    }

    /** Whether the marks were read at least once. */
    public boolean known() {
        return read;
    }

    /** The last read's failure, naming the database; null while the database can be read. */
    public SQLException error() {
        return error;
    }

    /** When the marks were last read successfully; null before the first. */
    public Instant lastGoodRead() {
        return lastGoodRead;
    }
}
