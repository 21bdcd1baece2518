package dev.ferret.cdi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The daemon's scheduler on a container's {@code ManagedScheduledExecutorService}, one task at a time.
 *
 * <p>The runtime's scheduler is single-threaded in Java SE and the high water mark detector relies on it: a poll the
 * daemon schedules and a detection a non-stale wait submits must never overlap. A managed scheduled executor runs
 * tasks on the server's shared pool, so two of them may run at once; every task handed in here therefore runs under
 * one lock. Tasks are short (a detection, a wake-up), so the lock is never held long.
 *
 * <p>Lifecycle methods are not forwarded: a managed executor belongs to the container, which refuses them.
 */
final class SerialScheduledExecutor extends ContainerOwnedExecutor implements ScheduledExecutorService {

    private final ScheduledExecutorService delegate;
    private final ReentrantLock lock = new ReentrantLock();

    SerialScheduledExecutor(ScheduledExecutorService delegate) {
        this.delegate = delegate;
    }

    private Runnable serial(Runnable task) {
        return () -> {
            lock.lock();
            try {
                task.run();
            } finally {
                lock.unlock();
            }
        };
    }

    private <V> Callable<V> serial(Callable<V> task) {
        return () -> {
            lock.lock();
            try {
                return task.call();
            } finally {
                lock.unlock();
            }
        };
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return delegate.schedule(serial(command), delay, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return delegate.schedule(serial(callable), delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return delegate.scheduleAtFixedRate(serial(command), initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return delegate.scheduleWithFixedDelay(serial(command), initialDelay, delay, unit);
    }

    @Override
    public void execute(Runnable command) {
        delegate.execute(serial(command));
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        return delegate.submit(serial(task));
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        return delegate.submit(serial(task), result);
    }

    @Override
    public Future<?> submit(Runnable task) {
        return delegate.submit(serial(task));
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) throws InterruptedException {
        return delegate.invokeAll(wrap(tasks));
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException {
        return delegate.invokeAll(wrap(tasks), timeout, unit);
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks) throws InterruptedException, ExecutionException {
        return delegate.invokeAny(wrap(tasks));
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        return delegate.invokeAny(wrap(tasks), timeout, unit);
    }

    private <T> List<Callable<T>> wrap(Collection<? extends Callable<T>> tasks) {
        List<Callable<T>> wrapped = new ArrayList<>(tasks.size());
        tasks.forEach(t -> wrapped.add(serial(t)));
        return wrapped;
    }
}
