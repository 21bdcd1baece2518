package dev.ferret.runtime.time;

/**
 * The daemon's monotonic time, for every deadline, due time and elapsed duration it computes (wall-clock
 * timestamps come from the store's {@link java.time.Clock}). Tests pass one they move by hand.
 */
@FunctionalInterface
public interface TimeSource {

    /** The JVM's monotonic clock. */
    TimeSource SYSTEM = System::nanoTime;

    /** Nanoseconds from an arbitrary origin; only differences mean anything. */
    long nanoTime();
}
