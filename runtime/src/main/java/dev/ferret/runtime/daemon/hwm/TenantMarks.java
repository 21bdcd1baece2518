package dev.ferret.runtime.daemon.hwm;

import dev.ferret.runtime.dialect.DaemonSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The high water marks of one database's tenants, when events are partitioned by tenant. A tenant's numbers are
 * drawn under its sequence row's lock inside the append transaction, so they have no holes and commit in order:
 * its committed last number is its mark, with no gap to wait on. One statement reads every tenant's mark.
 *
 * <p>Written only by the daemon's scheduler thread ({@link #refresh()}); the marks are published as an immutable
 * map for agents, status and waiters.
 */
public final class TenantMarks {

    private final DataSource dataSource;
    private final DaemonSql sql;
    private volatile Map<String, Long> marks = Map.of();
    private volatile boolean read;

    public TenantMarks(DataSource dataSource, DaemonSql sql) {
        this.dataSource = dataSource;
        this.sql = sql;
    }

    /**
     * Reads every tenant's mark and returns the tenants whose mark moved since the last read, new tenants
     * included. A tenant the engine skipped (its row locked by an append in flight) keeps its mark.
     */
    public Map<String, Long> refresh() throws SQLException {
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
        }
        read = true;
        return moved;
    }

    /** The tenant's mark as last read; 0 for a tenant not seen yet. */
    public long markOf(String tenantId) {
        return marks.getOrDefault(tenantId, 0L);
    }

    /** Every tenant's mark as last read. */
    public Map<String, Long> marks() {
        return marks;
    }

    /** Whether the marks were read at least once. */
    public boolean known() {
        return read;
    }
}
