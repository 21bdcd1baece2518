package dev.ferret.runtime.retry;

import dev.ferret.daemon.DaemonSettings;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * Retries one shard's page attempts (load, apply, write and progression together) on transient database failures.
 * Each attempt is complete in itself, so a retry re-runs the whole page. The SE default uses Resilience4j; a
 * container may supply MicroProfile Fault Tolerance instead.
 */
@FunctionalInterface
public interface TransientRetry {

    /** Runs {@code attempt}, again after a backoff while it fails with what the shard's filter calls transient. */
    <T> T call(Callable<T> attempt) throws Exception;

    /** Builds the retry of one shard. */
    @FunctionalInterface
    interface Factory {
        TransientRetry create(String shardName, DaemonSettings settings, Predicate<Throwable> isTransient);
    }

    /** Resilience4j: {@code maxTransientRetries} retries, exponential backoff from {@code transientRetryBackoff}. */
    Factory RESILIENCE4J = (shardName, settings, isTransient) -> {
        Retry retry = Retry.of(shardName, RetryConfig.custom()
                .maxAttempts(settings.getMaxTransientRetries() + 1)
                .intervalFunction(interval(Backoff.of(settings)))
                .retryOnException(isTransient)
                .build());
        return new TransientRetry() {
            @Override
            public <T> T call(Callable<T> attempt) throws Exception {
                return retry.executeCallable(attempt);
            }
        };
    };

    /** Resilience4j's waits, from the one {@link Backoff} definition. */
    private static IntervalFunction interval(Backoff backoff) {
        return attempt -> backoff.delay(attempt).toMillis();
    }
}
