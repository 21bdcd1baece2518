package dev.ferret.runtime;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.metrics.ReadRoute;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a query session's read goes when its database has a read replica: to the replica, unless the read must see
 * a position of the primary the replica has not been proven to have replayed, and then to the primary.
 *
 * <p>A read needs a position when it asked for non-stale data: its own {@code queryForNonStaleData} wait (the
 * primary's position read right after that wait), or any store-wide {@code waitForNonStaleProjectionData} before it
 * (each database's floor, raised after each such wait, since that wait promises every later read). With
 * {@link ReplayPositions} (PostgreSQL) the replica's replayed position is read, and read again until it passes the
 * needed one or the catch-up bound runs out; past the bound the read goes to the primary. Without them nothing can
 * prove the replica current, so such a read goes to the primary at once; on those engines a store-wide wait sends
 * every later query session of that database to the primary.
 *
 * <p>Thread-safety: sessions on any thread call in; the state per database is two monotonic {@link AtomicLong}s
 * (the floor, and the highest replayed position seen, which lets a read whose need lies below it skip the check) and
 * the counters are {@link LongAdder}s. Nothing here logs a data source's URL or credentials, only database names.
 */
final class ReplicaReads {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaReads.class);

    /** A read that needs no position of the primary. */
    static final long NOTHING_AWAITED = Long.MIN_VALUE;
    /** A need no replica of this engine can be proven to meet. */
    static final long UNPROVABLE = Long.MAX_VALUE;
    /** How often a replica's replayed position is read again while a read waits for it. */
    static final Duration POLL = Duration.ofMillis(10);

    /**
     * How reads went, since the store started.
     *
     * @param fromReplica    reads the replica served (those below included)
     * @param caughtUp       reads that needed a position and were served by a replica proven past it
     * @param fellBack       reads that needed a position the replica did not reach within the bound: the primary
     * @param unprovable     reads that needed a position on an engine that cannot prove one: the primary
     */
    record Counts(long fromReplica, long caughtUp, long fellBack, long unprovable) {
    }

    /** One database's replica and what is known of it. */
    private static final class Replica {
        final DataSource dataSource;
        final AtomicLong floor = new AtomicLong(NOTHING_AWAITED);
        final AtomicLong replayed = new AtomicLong(ReplayPositions.NOT_REPLAYING);

        Replica(DataSource dataSource) {
            this.dataSource = dataSource;
        }
    }

    private final Map<String, Replica> byDatabase;
    /** Null where the engine reports no positions. */
    private final ReplayPositions positions;
    private final TimeSource time;
    private final Duration catchUp;
    private final DaemonMetrics metrics;
    private final LongAdder fromReplica = new LongAdder();
    private final LongAdder caughtUp = new LongAdder();
    private final LongAdder fellBack = new LongAdder();
    private final LongAdder unprovable = new LongAdder();

    /**
     * @param replicas  the replica of each database that has one, by database name
     * @param positions how positions are read, or null where the engine reports none
     * @param catchUp   how long a read waits for a replica to reach what it needs
     */
    ReplicaReads(Map<String, DataSource> replicas, ReplayPositions positions, TimeSource time, Duration catchUp) {
        this(replicas, positions, time, catchUp, DaemonMetrics.NONE);
    }

    /** @param metrics told of every read of a database with a replica, and where it went */
    ReplicaReads(Map<String, DataSource> replicas, ReplayPositions positions, TimeSource time, Duration catchUp,
                 DaemonMetrics metrics) {
        Map<String, Replica> copy = new LinkedHashMap<>();
        replicas.forEach((name, dataSource) -> copy.put(name, new Replica(dataSource)));
        this.byDatabase = Map.copyOf(copy);
        this.positions = positions;
        this.time = time;
        this.catchUp = catchUp;
        this.metrics = metrics;
    }

    /**
     * The replicas {@code options} configure, checked against {@code databases}.
     *
     * @throws ConfigurationException naming the database whose replica is its primary data source
     */
    static ReplicaReads of(StoreOptions options, TenantDatabases databases, ReplayPositions positions,
                           TimeSource time, DaemonMetrics metrics) {
        Map<String, DataSource> replicas = new LinkedHashMap<>();
        if (options.getReplica() != null) {
            replicas.put(StoreOptions.DEFAULT_DATABASE, options.getReplica());
        }
        replicas.putAll(options.tenancy().replicas());
        for (TenantDatabases.Database database : databases.all()) {
            if (replicas.get(database.name()) == database.dataSource()) {
                throw new ConfigurationException("the replica of database '" + database.name() + "' is its primary"
                        + " data source; pass the data source of a standby, or no replica");
            }
        }
        if (!replicas.isEmpty()) {
            LOG.info("Ferret query sessions of databases {} read from their replicas; non-stale reads {}",
                    replicas.keySet(), positions == null ? "read the primaries (the engine reports no replay"
                            + " position)" : "wait up to " + options.getReplicaCatchUpTimeout()
                            + " for a replica to catch up, then read the primary");
        }
        return new ReplicaReads(replicas, positions, time, options.getReplicaCatchUpTimeout(), metrics);
    }

    /**
     * Where a read of {@code database} goes that needs the primary's position {@code awaited} (or
     * {@link #NOTHING_AWAITED}), the database's floor included: the database itself when it has no replica.
     */
    DataSource forRead(TenantDatabases.Database database, long awaited) {
        Replica replica = byDatabase.get(database.name());
        if (replica == null) {
            return database.dataSource();
        }
        ReadRoute route = route(database, replica, Math.max(awaited, replica.floor.get()));
        switch (route) {
            case REPLICA -> fromReplica.increment();
            case REPLICA_CAUGHT_UP -> {
                fromReplica.increment();
                caughtUp.increment();
            }
            case PRIMARY_UNPROVABLE -> unprovable.increment();
            case PRIMARY_REPLICA_BEHIND -> fellBack.increment();
        }
        metrics.replicaRead(database.name(), route);
        return route == ReadRoute.REPLICA || route == ReadRoute.REPLICA_CAUGHT_UP ? replica.dataSource
                : database.dataSource();
    }

    private ReadRoute route(TenantDatabases.Database database, Replica replica, long needed) {
        if (needed == NOTHING_AWAITED) {
            return ReadRoute.REPLICA;
        }
        if (needed != UNPROVABLE && needed <= replica.replayed.get()) {
            return ReadRoute.REPLICA_CAUGHT_UP;
        }
        if (positions == null || needed == UNPROVABLE) {
            return ReadRoute.PRIMARY_UNPROVABLE;
        }
        return reaches(database.name(), replica, needed) ? ReadRoute.REPLICA_CAUGHT_UP
                : ReadRoute.PRIMARY_REPLICA_BEHIND;
    }

    /**
     * What a read of {@code database} must see after a non-stale wait that has just ended: the primary's position
     * now, {@link #UNPROVABLE} where the engine reports none, {@link #NOTHING_AWAITED} when it has no replica.
     */
    long awaitedNow(TenantDatabases.Database database) {
        if (!byDatabase.containsKey(database.name())) {
            return NOTHING_AWAITED;
        }
        if (positions == null) {
            return UNPROVABLE;
        }
        try {
            return positions.primary(database.dataSource());
        } catch (SQLException e) {
            // without the position nothing can be proven; the read goes to the primary
            LOG.warn("Reading the log position of database {} after a non-stale wait failed (SQLState {}): its"
                    + " non-stale read goes to the primary", database.name(), e.getSQLState());
            return UNPROVABLE;
        }
    }

    /** After a store-wide non-stale wait: every later read of each database with a replica needs what it awaited. */
    void storeWideWaitEnded(Iterable<TenantDatabases.Database> databases) {
        for (TenantDatabases.Database database : databases) {
            Replica replica = byDatabase.get(database.name());
            if (replica != null) {
                long awaited = awaitedNow(database);
                replica.floor.accumulateAndGet(awaited, Math::max);
            }
        }
    }

    /** Reads the replica's position until it reaches {@code needed} or the bound runs out. */
    private boolean reaches(String database, Replica replica, long needed) {
        long deadline = time.nanoTime() + catchUp.toNanos();
        while (true) {
            long replayed;
            try {
                replayed = positions.replayed(replica.dataSource);
            } catch (SQLException e) {
                LOG.warn("Reading the replay position of the replica of database {} failed (SQLState {}): the"
                        + " read goes to the primary", database, e.getSQLState());
                return false;
            }
            if (replica.replayed.accumulateAndGet(replayed, Math::max) >= needed) {
                return true;
            }
            long left = deadline - time.nanoTime();
            if (left <= 0) {
                return false;
            }
            try {
                time.sleep(Duration.ofNanos(Math.min(left, POLL.toNanos())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** How reads went so far. */
    Counts counts() {
        return new Counts(fromReplica.sum(), caughtUp.sum(), fellBack.sum(), unprovable.sum());
    }
}
