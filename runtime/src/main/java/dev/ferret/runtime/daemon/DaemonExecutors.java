package dev.ferret.runtime.daemon;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the daemon runs: a single-threaded scheduler that owns the high water mark detector and all timers, and a
 * bounded pool for shard page loops. The seam a container fills with its managed executors.
 *
 * @param scheduler  runs the detector (one thread: the detector's state has a single owner) and delayed retries
 * @param workers    runs page loops; its size bounds the daemon's concurrent page work and so its connections
 * @param ownedByDaemon whether the daemon shuts them down when it stops
 */
public record DaemonExecutors(ScheduledExecutorService scheduler, ExecutorService workers, boolean ownedByDaemon) {

    /** The SE default: daemon threads named after the store, {@code workerThreads} page loops at once. */
    public static DaemonExecutors create(String storeName, int workerThreads) {
        return new DaemonExecutors(Executors.newSingleThreadScheduledExecutor(named(storeName + "-daemon-scheduler")),
                Executors.newFixedThreadPool(workerThreads, named(storeName + "-shard")), true);
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
