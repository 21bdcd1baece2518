package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.daemon.hwm.HighWaterMarkDetector;
import dev.ferret.runtime.daemon.hwm.TenantMarks;
import dev.ferret.runtime.dialect.DaemonSql;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The marks shards work towards: the detector's for the store's log, or, with tenant-partitioned events, each
 * database's {@link TenantMarks}. Both are written only on the daemon's scheduler thread (their single owner) and
 * read lock-free by agents, status and waiters. The map of databases is fixed at construction.
 */
final class LogMarks {

    private final HighWaterMarkDetector detector;
    /** Per database name, when events are partitioned by tenant; empty otherwise. */
    private final Map<String, TenantMarks> tenantMarks;

    LogMarks(StoreContext context, DaemonSettings settings, DaemonSql sql) {
        this.detector = new HighWaterMarkDetector(context.dataSource(), context.dialect(), context.names(), settings,
                context.clock());
        Map<String, TenantMarks> marks = new LinkedHashMap<>();
        if (context.partitionedByTenant()) {
            for (TenantDatabases.Database database : context.databases().all()) {
                marks.put(database.name(), new TenantMarks(database.name(), database.dataSource(), sql,
                        context.clock()));
            }
        }
        this.tenantMarks = Collections.unmodifiableMap(marks);
    }

    HighWaterMarkDetector detector() {
        return detector;
    }

    TenantMarks of(TenantDatabases.Database database) {
        return tenantMarks.get(database.name());
    }

    Collection<TenantMarks> tenants() {
        return tenantMarks.values();
    }

    /** The mark {@code partition} is working towards: the store's, or its tenant's. */
    long markOf(LogPartition partition) {
        return partition.perTenant() ? of(partition.database()).markOf(partition.tenantId()) : detector.mark();
    }

    /**
     * The mark {@code partition} is working towards as a cell: its tenant's (see {@link TenantMarks#cellOf}), or the
     * detector's. For the shard's own loop and the supervisor, which ask for it on every visit.
     */
    LongSupplier cellOf(LogPartition partition) {
        return partition.perTenant() ? of(partition.database()).cellOf(partition.tenantId()) : detector::mark;
    }

    /** Whether the mark of {@code partition} has been read at least once since the daemon started. */
    boolean known(LogPartition partition) {
        return partition.perTenant() ? of(partition.database()).known() : detector.status().healthy();
    }
}
