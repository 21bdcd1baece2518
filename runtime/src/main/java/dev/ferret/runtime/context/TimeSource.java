package dev.ferret.runtime.context;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The daemon's monotonic time: every deadline, due time and elapsed duration it computes is read here, and every
 * wait bounded by such a deadline waits here (wall-clock timestamps come from the store's {@link java.time.Clock}).
 * The system implementation is the JVM's monotonic clock; tests pass one they move by hand, so drain, retry, lock and
 * heartbeat rules run on virtual time without sleeping.
 */
public interface TimeSource {

    /** The JVM's monotonic clock; waits block the calling thread for real. */
    TimeSource SYSTEM = new TimeSource() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public boolean awaitDone(Future<?> future, long deadlineNanos) throws InterruptedException {
            try {
                if (deadlineNanos == Long.MAX_VALUE) {
                    future.get();
                } else {
                    future.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                return true;
            } catch (TimeoutException e) {
                return false;
            } catch (CancellationException | ExecutionException e) {
                // it ended all the same; how is its owner's to report
                return true;
            }
        }

        @Override
        public void sleep(Duration pause) throws InterruptedException {
            Thread.sleep(pause.toMillis());
        }

        @Override
        public String toString() {
            return "system time";
        }
    };

    /** Nanoseconds from an arbitrary origin; only differences mean anything. */
    long nanoTime();

    /**
     * Waits until {@code future} has ended (completed, failed or cancelled) or this time reaches
     * {@code deadlineNanos} ({@code Long.MAX_VALUE}: no bound). Returns whether it ended.
     */
    boolean awaitDone(Future<?> future, long deadlineNanos) throws InterruptedException;

    /** Waits for {@code pause} to pass on this time. */
    void sleep(Duration pause) throws InterruptedException;
}
