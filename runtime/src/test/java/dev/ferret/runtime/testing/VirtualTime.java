package dev.ferret.runtime.testing;

import dev.ferret.runtime.context.TimeSource;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link TimeSource} that stands still until a test {@link #advance advances} it: a drain bound, a back-off or a
 * heartbeat bound passes exactly when the test says so, never because the machine was slow. A bounded wait parks
 * until what it waits for has ended or the time reaches its deadline; {@link #awaitWaiters} lets a test know that
 * the code under test is parked at the current time before it moves time on.
 *
 * <p>All state is guarded by one lock; parked threads re-check their future a few milliseconds apart (real time),
 * which only bounds how soon they notice it ended, never whether they time out.
 */
public final class VirtualTime implements TimeSource {

    private static final long RECHECK_MILLIS = 5;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition moved = lock.newCondition();
    /** Each parked thread and the time it saw when it last parked. */
    private final Map<Thread, Long> parked = new HashMap<>();
    private long now;

    @Override
    public long nanoTime() {
        lock.lock();
        try {
            return now;
        } finally {
            lock.unlock();
        }
    }

    /** Moves the time on by {@code duration} and wakes every parked wait to re-check its deadline. */
    public void advance(Duration duration) {
        lock.lock();
        try {
            now += duration.toNanos();
            moved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Nanoseconds since this time started. */
    public Duration elapsed() {
        return Duration.ofNanos(nanoTime());
    }

    @Override
    public boolean awaitDone(Future<?> future, long deadlineNanos) throws InterruptedException {
        lock.lock();
        try {
            while (!future.isDone()) {
                if (deadlineNanos != Long.MAX_VALUE && now - deadlineNanos >= 0) {
                    return false;
                }
                park();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void sleep(Duration pause) throws InterruptedException {
        lock.lock();
        try {
            long until = now + pause.toNanos();
            while (now - until < 0) {
                park();
            }
        } finally {
            lock.unlock();
        }
    }

    /** With the lock held. */
    private void park() throws InterruptedException {
        parked.put(Thread.currentThread(), now);
        try {
            moved.await(RECHECK_MILLIS, TimeUnit.MILLISECONDS);
        } finally {
            parked.remove(Thread.currentThread());
        }
    }

    /**
     * Waits (real time, up to {@code atMost}) until at least {@code count} threads are parked in a wait of this time
     * having seen its current value: they will only move on when the time is advanced or what they wait for ends.
     */
    public void awaitWaiters(int count, Duration atMost) throws InterruptedException, TimeoutException {
        if (!awaitWaitersOrDone(count, null, atMost)) {
            throw new IllegalStateException("no future to end was given");
        }
    }

    /**
     * As {@link #awaitWaiters}, but also returns (false) as soon as {@code done} has ended: for a test that moves
     * the time on, bit by bit, for as long as the code under test waits on it.
     */
    public boolean awaitWaitersOrDone(int count, Future<?> done, Duration atMost)
            throws InterruptedException, TimeoutException {
        long giveUp = System.nanoTime() + atMost.toNanos();
        lock.lock();
        try {
            while (parked.values().stream().filter(seen -> seen == now).count() < count) {
                if (done != null && done.isDone()) {
                    return false;
                }
                if (System.nanoTime() - giveUp >= 0) {
                    throw new TimeoutException(count + " waiters were expected at " + elapsed() + "; parked: "
                            + parked.size());
                }
                moved.await(RECHECK_MILLIS, TimeUnit.MILLISECONDS);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
