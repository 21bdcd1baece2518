package dev.ferret.runtime.testing;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scheduler a test can make behave like a suspended container: it refuses new tasks (a
 * {@link RejectedExecutionException}, as Liberty does), or accepts them and never runs them (WildFly's WFLYEE0111:
 * the run is skipped and logged). Periodic tasks already scheduled go on.
 */
public final class RefusingScheduler implements ScheduledExecutorService {

    private final ScheduledExecutorService delegate;
    private volatile boolean refusing;
    private volatile boolean dropping;
    private final AtomicInteger refuseNext = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger dropped = new AtomicInteger();

    public RefusingScheduler(ScheduledExecutorService delegate) {
        this.delegate = delegate;
    }

    /** Refuses every task submitted while on. */
    public void refuse(boolean on) {
        refusing = on;
    }

    /** Accepts and silently drops every task submitted while on. */
    public void drop(boolean on) {
        dropping = on;
    }

    /** Refuses the next {@code n} tasks, then accepts again. */
    public void refuseNext(int n) {
        refuseNext.set(n);
    }

    public int refused() {
        return refused.get();
    }

    public int dropped() {
        return dropped.get();
    }

    private void admit() {
        if (refusing || refuseNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            refused.incrementAndGet();
            throw new RejectedExecutionException("test: the container is suspended and refuses the task");
        }
    }

    private Runnable maybeDropped(Runnable task) {
        if (!dropping) {
            return task;
        }
        dropped.incrementAndGet();
        return () -> { };
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        admit();
        return delegate.schedule(maybeDropped(command), delay, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        admit();
        return delegate.schedule(callable, delay, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        admit();
        return delegate.scheduleAtFixedRate(command, initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        admit();
        return delegate.scheduleWithFixedDelay(command, initialDelay, delay, unit);
    }

    @Override
    public void execute(Runnable command) {
        admit();
        delegate.execute(maybeDropped(command));
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        admit();
        return delegate.submit(task);
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        admit();
        return delegate.submit(task, result);
    }

    @Override
    public Future<?> submit(Runnable task) {
        admit();
        return delegate.submit(task);
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) throws InterruptedException {
        admit();
        return delegate.invokeAll(tasks);
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException {
        admit();
        return delegate.invokeAll(tasks, timeout, unit);
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks) throws InterruptedException, ExecutionException {
        admit();
        return delegate.invokeAny(tasks);
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        admit();
        return delegate.invokeAny(tasks, timeout, unit);
    }

    @Override
    public void shutdown() {
        delegate.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return delegate.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return delegate.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return delegate.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return delegate.awaitTermination(timeout, unit);
    }
}
