package dev.ferret.cdi;

import dev.ferret.runtime.retry.TransientRetry;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.eclipse.microprofile.faulttolerance.Retry;

/**
 * The runtime's transient-retry seam on MicroProfile Fault Tolerance: a daemon page (load, apply, write and
 * progression) that fails on a transient database error is attempted again by the container's {@code @Retry}, so
 * operators tune it with the standard overrides, e.g.
 * {@code dev.ferret.cdi.FaultToleranceRetries/attempt/Retry/maxRetries=10}. Registered only when the server
 * offers MicroProfile Fault Tolerance; otherwise the runtime's Resilience4j retry stays in place.
 */
@ApplicationScoped
public class FaultToleranceRetries {

    /** Carries a transient failure through {@code @Retry}, which retries on this type alone. */
    public static final class TransientPageFailure extends Exception {

        private static final long serialVersionUID = 1L;

        TransientPageFailure(Exception cause) {
            super(cause);
        }
    }

    @Retry(maxRetries = 5, delay = 100, delayUnit = ChronoUnit.MILLIS, jitter = 50, maxDuration = 60,
            durationUnit = ChronoUnit.SECONDS, retryOn = TransientPageFailure.class)
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
                try {
                    return attempt(attempt, isTransient);
                } catch (TransientPageFailure exhausted) {
                    // the runtime sees its own failure and backs off by itself
                    throw (Exception) exhausted.getCause();
                }
            }
        };
    }
}
