package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TimeSource;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the daemon runs: a single-threaded scheduler that owns the high water mark detector and all timers, a
 * bounded pool for shard page loops and outbox runs, and the threads the side-effect publisher is called on, apart
 * from the workers so that a publisher that hangs never holds a page loop's thread. The seam a container fills with
 * its managed executors.
 *
 * @param scheduler  runs the detector (one thread: the detector's state has a single owner) and delayed retries
 * @param workers    runs page loops and outbox runs; its size bounds the daemon's concurrent page work and so its
 *                   connections
 * @param deliveries runs each call of the side-effect publisher, which an outbox run waits for up to the delivery
 *                   timeout; at most one call per shard is ever in flight. Null: the outbox run calls the
 *                   publisher itself, with no timeout (a call on the workers' own pool could wait behind its
 *                   caller)
 * @param ownedByDaemon whether the daemon shuts them down when it stops
 */
public record DaemonExecutors(ScheduledExecutorService scheduler, ExecutorService workers, ExecutorService deliveries,
                              boolean ownedByDaemon) {

    private static final Logger LOG = LoggerFactory.getLogger(DaemonExecutors.class);

    /** The publisher called by the outbox run itself, without a delivery timeout. */
    public DaemonExecutors(ScheduledExecutorService scheduler, ExecutorService workers, boolean ownedByDaemon) {
        this(scheduler, workers, null, ownedByDaemon);
    }

    /**
     * The SE default: daemon threads named after the store, {@code workerThreads} page loops at once, publisher
     * calls on threads of their own (as many as calls in flight: at most one per shard).
     */
    public static DaemonExecutors create(String storeName, int workerThreads) {
        return new DaemonExecutors(Executors.newSingleThreadScheduledExecutor(named(storeName + "-daemon-scheduler")),
                Executors.newFixedThreadPool(workerThreads, named(storeName + "-shard")),
                Executors.newCachedThreadPool(named(storeName + "-outbox")), true);
    }

    /**
     * Shuts the executors down by {@code deadlineNanos} (a {@code time} reading): the scheduler and the delivery
     * threads at once (past the drain every outbox stopped, so a publisher call still running is hung and left
     * alone), the workers once their pages ended, then at once.
     */
    void shutDown(long deadlineNanos, TimeSource time) {
        scheduler.shutdownNow();
        if (deliveries != null) {
            deliveries.shutdownNow();
        }
        workers.shutdown();
        try {
            long remaining = deadlineNanos == Long.MAX_VALUE ? Long.MAX_VALUE : deadlineNanos - time.nanoTime();
            if (!workers.awaitTermination(Math.max(0, remaining), TimeUnit.NANOSECONDS)) {
                workers.shutdownNow();
                LOG.warn("A shard page ignored the drain bound's cancel; its worker thread is left to end alone");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            workers.shutdownNow();
        }
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
