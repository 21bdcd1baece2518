package dev.ferret.runtime.daemon;

import com.github.benmanes.caffeine.cache.AsyncCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.ferret.runtime.daemon.DatabaseLimits.SqlWork;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pages of the log read lately, for the other shards that read the same slice from the same floor: a tenant's
 * projections after the tenant's events arrive, or several projections of one database. The first shard to ask
 * reads the page; the others that ask while it reads wait for its result, and those that ask later take it from
 * here, so a slice is read and its events deserialized once, not once per projection. Bounded in bytes for the
 * whole store (the least used pages leave first) and in age; a page that failed to load is not kept, and a shard
 * that waited for it loads its own.
 *
 * <p>Thread-safe: every shard's loop uses it. Off when the store has one projection (nothing to share) or no room.
 */
final class SharedLoads {

    /** The longest a shard waits for another's load before reading the page itself. */
    static final Duration LONGEST_WAIT = Duration.ofSeconds(30);
    /** How long an unused page stays: siblings due at once take their turns within seconds of each other. */
    private static final Duration KEPT_FOR = Duration.ofMinutes(1);

    /** A slice of the log from a floor to a mark; the tenant is null for the whole log of a database. */
    private record Key(String database, String tenant, long from, long to) {
    }

    /** Null when off. */
    private final AsyncCache<Key, SharedPage> pages;
    private final AtomicLong loads = new AtomicLong();
    private final AtomicLong shared = new AtomicLong();

    private SharedLoads(long maxBytes) {
        this.pages = maxBytes <= 0 ? null : Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Key key, SharedPage page) -> (int) Math.min(Integer.MAX_VALUE, page.weight()))
                .expireAfterWrite(KEPT_FOR)
                .executor(Runnable::run)
                .buildAsync();
    }

    /** Sharing pages of at most {@code maxBytes} together, when more than one projection reads each slice. */
    static SharedLoads of(long maxBytes, int projections) {
        return new SharedLoads(projections > 1 ? maxBytes : 0);
    }

    /**
     * The page of {@code partition} above {@code from} up to {@code to}, at most {@code limit} rows: another shard's
     * when it read the same and serves the limit, else read now through {@code read} (and kept for the others).
     *
     * @throws SQLException what {@code read} threw; or, when interrupted (a drain cancelled the waiting run), a
     *                      cancellation that carries the interrupt on
     */
    SharedPage load(LogPartition partition, long from, long to, int limit, SqlWork<SharedPage> read)
            throws SQLException {
        if (pages == null) {
            return read.run();
        }
        Key key = new Key(partition.database().name(), partition.tenantId(), from, to);
        CompletableFuture<SharedPage> mine = new CompletableFuture<>();
        CompletableFuture<SharedPage> present = pages.asMap().putIfAbsent(key, mine);
        if (present != null) {
            SharedPage page = awaitOther(present);
            if (page != null && page.serves(limit)) {
                shared.incrementAndGet();
                return page;
            }
            // a page for another limit, or a load that failed: read this shard's own, and leave the kept one
            return counted(read.run());
        }
        try {
            SharedPage page = counted(read.run());
            mine.complete(page);
            return page;
        } catch (SQLException | RuntimeException | Error e) {
            // the cache drops a future that failed: the next shard reads for itself
            mine.completeExceptionally(e);
            throw e;
        }
    }

    private SharedPage counted(SharedPage page) {
        loads.incrementAndGet();
        return page;
    }

    /** The other shard's page; null when it failed or took longer than {@link #LONGEST_WAIT}. */
    private static SharedPage awaitOther(CompletableFuture<SharedPage> present) throws SQLException {
        try {
            return present.get(LONGEST_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("cancelled while another shard read the same page", e);
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
    }

    /** Pages read from the database since the start. */
    long loads() {
        return loads.get();
    }

    /** Pages a shard took from another's load since the start. */
    long shared() {
        return shared.get();
    }
}
