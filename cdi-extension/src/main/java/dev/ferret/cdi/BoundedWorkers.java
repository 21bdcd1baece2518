package dev.ferret.cdi;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * At most {@code limit} of the daemon's tasks on the container's managed executor at once, the rest queued here in
 * arrival order: {@code ferret.daemon.worker-threads} bounds how many of the container's threads Ferret takes, as
 * the fixed pool does in Java SE. Each task that ends hands its slot to the next queued one.
 *
 * <h2>Concurrency</h2>
 * {@link #queued} is lock-free; {@link #running} counts the slots taken, claimed by compare-and-set before a task is
 * handed over and given back when it ends or is refused. A task the container refuses is dropped (logged): the
 * daemon's supervisor finds the shard without a run and submits it again.
 */
final class BoundedWorkers extends ContainerOwnedExecutor {

    private static final Logger LOG = Logger.getLogger(BoundedWorkers.class.getName());

    private final Executor delegate;
    private final int limit;
    private final Queue<Runnable> queued = new ConcurrentLinkedQueue<>();
    private final AtomicInteger running = new AtomicInteger();

    BoundedWorkers(Executor delegate, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("a limit of at least one task; was " + limit);
        }
        this.delegate = delegate;
        this.limit = limit;
    }

    @Override
    public void execute(Runnable command) {
        if (isShutdown()) {
            throw new RejectedExecutionException("the Ferret daemon's workers are shut down");
        }
        queued.add(command);
        handOver();
    }

    /** Tasks currently on the container's executor; for tests. */
    int running() {
        return running.get();
    }

    private void handOver() {
        while (!queued.isEmpty()) {
            int now = running.get();
            if (now >= limit) {
                return;
            }
            if (!running.compareAndSet(now, now + 1)) {
                continue;
            }
            Runnable next = queued.poll();
            if (next == null) {
                running.decrementAndGet();
                continue;
            }
            try {
                delegate.execute(() -> {
                    try {
                        next.run();
                    } finally {
                        running.decrementAndGet();
                        handOver();
                    }
                });
            } catch (RejectedExecutionException e) {
                running.decrementAndGet();
                LOG.log(Level.WARNING, "The managed executor refused a Ferret daemon task; the daemon's supervisor"
                        + " submits the shard again", e);
                return;
            }
        }
    }
}
