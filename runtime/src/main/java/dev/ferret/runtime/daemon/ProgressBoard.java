package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TimeSource;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Where waiters for shard progress park. Agents {@link #changed() signal} after every commit and state change;
 * waiters re-check their condition. One lock, held only to park and signal.
 */
final class ProgressBoard {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final TimeSource time;

    ProgressBoard(TimeSource time) {
        this.time = time;
    }

    void changed() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until {@code done} holds or {@code timeout} passes; returns whether it holds. */
    boolean await(BooleanSupplier done, Duration timeout, Runnable onEachChange) throws InterruptedException {
        long deadline = time.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (!done.getAsBoolean()) {
                long remaining = deadline - time.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                // bounded re-check: a signal between the check and the park is never waited out for long
                changed.await(Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
                onEachChange.run();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
