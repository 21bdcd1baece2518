package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the shards of one database share: the throttles on concurrent page loads and writes, and the turn to clean
 * up delivered outbox rows. The throttle maps are fixed at construction; each cleanup turn is one atomic value,
 * claimed by compare-and-set, so any worker may ask.
 */
final class DatabaseLimits {

    /** Per database name; absent when unbounded. */
    private final Map<String, Semaphore> loads;
    private final Map<String, Semaphore> writes;
    /** Per database name: the nano time before which its outbox is not cleaned up again. */
    private final Map<String, AtomicLong> outboxCleanups = new ConcurrentHashMap<>();
    private final TimeSource time;

    DatabaseLimits(TenantDatabases databases, DaemonSettings settings, TimeSource time) {
        Map<String, Semaphore> loadThrottles = new HashMap<>();
        Map<String, Semaphore> writeThrottles = new HashMap<>();
        for (TenantDatabases.Database database : databases.all()) {
            if (settings.getMaxConcurrentEventLoadsPerDatabase() > 0) {
                loadThrottles.put(database.name(), new Semaphore(settings.getMaxConcurrentEventLoadsPerDatabase(), true));
            }
            if (settings.getMaxConcurrentBatchWritesPerDatabase() > 0) {
                writeThrottles.put(database.name(), new Semaphore(settings.getMaxConcurrentBatchWritesPerDatabase(),
                        true));
            }
        }
        this.loads = Collections.unmodifiableMap(loadThrottles);
        this.writes = Collections.unmodifiableMap(writeThrottles);
        this.time = time;
    }

    /** What runs while holding a database slot. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run() throws SQLException;
    }

    /** Runs a page load from {@code database} within its bound on concurrent loads. */
    <T> T loading(TenantDatabases.Database database, SqlWork<T> work) throws SQLException {
        return throttled(loads.get(database.name()), work);
    }

    /** Runs a page write to {@code database} within its bound on concurrent writes. */
    <T> T writing(TenantDatabases.Database database, SqlWork<T> work) throws SQLException {
        return throttled(writes.get(database.name()), work);
    }

    /**
     * Whether a shard's dispatcher should delete the delivered rows of {@code database} now: true for one caller per
     * {@code interval}, so shards sharing a database do not each run the delete.
     */
    boolean outboxCleanupDue(TenantDatabases.Database database, Duration interval) {
        AtomicLong next = outboxCleanups.computeIfAbsent(database.name(), name -> new AtomicLong(time.nanoTime()));
        long due = next.get();
        long now = time.nanoTime();
        return now - due >= 0 && next.compareAndSet(due, now + interval.toNanos());
    }

    private static <T> T throttled(Semaphore throttle, SqlWork<T> work) throws SQLException {
        if (throttle == null) {
            return work.run();
        }
        try {
            throttle.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTransientException("interrupted waiting for a database slot", e);
        }
        try {
            return work.run();
        } finally {
            throttle.release();
        }
    }
}
