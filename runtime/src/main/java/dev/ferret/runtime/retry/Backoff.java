package dev.ferret.runtime.retry;

import dev.ferret.daemon.DaemonSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * Capped exponential back-off: the first wait is {@code initial}, each next one twice the last but never more than
 * {@code max} (so an {@code initial} above {@code max} is waited once, then {@code max}). The one definition every waiter uses: the high water mark poll after a failed read, a shard after a
 * transient page failure, an outbox after a failed delivery, and the page retry (Resilience4j's interval function).
 */
public record Backoff(Duration initial, Duration max) {

    public Backoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
    }

    /** From the daemon's {@code transientRetryBackoff} up to its {@code maxRetryBackoff}. */
    public static Backoff of(DaemonSettings settings) {
        return new Backoff(settings.getTransientRetryBackoff(), settings.getMaxRetryBackoff());
    }

    /** The wait before retry number {@code attempt} (1 for the first). */
    public Duration delay(int attempt) {
        Duration delay = initial;
        for (int i = 1; i < attempt; i++) {
            delay = doubled(delay);
        }
        return delay;
    }

    private Duration doubled(Duration delay) {
        Duration doubled = delay.multipliedBy(2);
        return doubled.compareTo(max) > 0 ? max : doubled;
    }

    /** A fresh streak of waits. */
    public Attempts attempts() {
        return new Attempts(this);
    }

    /**
     * One waiter's streak: {@link #next()} gives the wait and doubles the one after it; {@link #reset()} starts over
     * after a success. Not thread-safe: its owner (named in the waiter's Javadoc) guards it.
     */
    public static final class Attempts {

        private final Backoff backoff;
        private Duration next;

        private Attempts(Backoff backoff) {
            this.backoff = backoff;
            this.next = backoff.initial;
        }

        /** The wait now; the one after it doubles, up to the maximum. */
        public Duration next() {
            Duration now = next;
            next = backoff.doubled(now);
            return now;
        }

        public void reset() {
            next = backoff.initial;
        }
    }
}
