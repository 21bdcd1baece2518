package dev.ferret.cdi;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.retry.TransientRetry;
import io.github.resilience4j.core.IntervalFunction;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.eclipse.microprofile.faulttolerance.Retry;

/**
 * The runtime's transient-retry seam on MicroProfile Fault Tolerance: a daemon page (load, apply, write and
 * progression) that fails on a transient database error is attempted again by the container's {@code @Retry}.
 * Registered only when the server offers MicroProfile Fault Tolerance; otherwise the runtime's Resilience4j retry
 * stays in place.
 *
 * <p>The same settings as in Java SE decide: {@code ferret.daemon.max-transient-retries} retries, the back-off
 * starting at {@code ferret.daemon.transient-retry-backoff} and doubling up to {@code ferret.daemon.max-retry-backoff}
 * (the very curve of the SE retry). {@code @Retry} cannot read them, its members being constants, so it only
 * re-invokes: its own delay is zero, its {@code maxRetries} is the most the setting allows, and each page's
 * {@link Attempts} counts the retries and waits the back-off before each. An operator's standard override, e.g.
 * {@code dev.ferret.cdi.FaultToleranceRetries/attempt/Retry/maxRetries=3}, can still lower the ceiling.
 */
@ApplicationScoped
public class FaultToleranceRetries {

    /** Waits out a back-off; tests record the waits instead. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(Duration duration) throws InterruptedException;
    }

    /** Carries a transient failure through {@code @Retry}, which retries on this type alone. */
    public static final class TransientPageFailure extends Exception {

        private static final long serialVersionUID = 1L;

        TransientPageFailure(Exception cause) {
            super(cause);
        }
    }

    private final Sleeper sleeper;

    public FaultToleranceRetries() {
        this(duration -> Thread.sleep(duration.toMillis()));
    }

    FaultToleranceRetries(Sleeper sleeper) {
        this.sleeper = sleeper;
    }

    /**
     * One attempt of a page, re-invoked by {@code @Retry} while it throws {@link TransientPageFailure}: that is,
     * while the failure is transient and {@code isTransient} (which counts the retries) allows another.
     */
    @Retry(maxRetries = 100, delay = 0, jitter = 0, maxDuration = 0, retryOn = TransientPageFailure.class)
    public <T> T attempt(Callable<T> attempt, Predicate<Throwable> isTransient) throws Exception {
        try {
            return attempt.call();
        } catch (Exception e) {
            if (isTransient.test(e)) {
                throw new TransientPageFailure(e);
            }
            throw e;
        }
    }

    /** The seam: each shard's retry goes through this bean's intercepted method. */
    TransientRetry.Factory factory() {
        return (shardName, settings, isTransient) -> new TransientRetry() {
            @Override
            public <T> T call(Callable<T> attempt) throws Exception {
                Attempts attempts = new Attempts(settings, isTransient, sleeper);
                try {
                    return attempt(() -> attempts.next(attempt), attempts::retry);
                } catch (TransientPageFailure exhausted) {
                    // the runtime sees its own failure and backs off by itself
                    throw (Exception) exhausted.getCause();
                }
            }
        };
    }

    /** The retries of one page: how many are left and how long to wait before the next. One page thread uses it. */
    private static final class Attempts {

        private final int maxRetries;
        private final IntervalFunction backoff;
        private final Predicate<Throwable> isTransient;
        private final Sleeper sleeper;
        private int made;

        Attempts(DaemonSettings settings, Predicate<Throwable> isTransient, Sleeper sleeper) {
            this.maxRetries = settings.getMaxTransientRetries();
            this.backoff = IntervalFunction.ofExponentialBackoff(settings.getTransientRetryBackoff(), 2.0,
                    settings.getMaxRetryBackoff());
            this.isTransient = isTransient;
            this.sleeper = sleeper;
        }

        <T> T next(Callable<T> attempt) throws Exception {
            if (made > 0) {
                sleeper.sleep(Duration.ofMillis(backoff.apply(made)));
            }
            made++;
            return attempt.call();
        }

        /** Whether a failure is retried: transient, and retries left. */
        boolean retry(Throwable failure) {
            return isTransient.test(failure) && made <= maxRetries;
        }
    }
}
