package dev.ferret.runtime.daemon;

import dev.ferret.projections.OutboxMessage;
import dev.ferret.projections.SideEffectPublisher;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One shard's calls of the side-effect publisher, each cut off at the delivery timeout: the call runs on the
 * daemon's delivery threads while the outbox run waits for it, so a publisher that hangs costs the run the timeout,
 * never the page loop's thread. A call cut off is interrupted and left to end; until it has, the shard's next
 * delivery fails at once instead of starting a second call beside it, so a hung publisher holds one thread per
 * shard, not one per retry. Used by one outbox run at a time (its {@link ShardOutbox}'s), which owns
 * {@link #stillRunning}.
 */
final class TimedDelivery {

    private final SideEffectPublisher publisher;
    private final ExecutorService deliveries;
    private final Duration timeout;
    /** Completed when the last call cut off has returned; null when none was cut off. */
    private CompletableFuture<Void> stillRunning;

    /** {@code deliveries} null: the publisher is called on the caller's thread, without a timeout. */
    TimedDelivery(SideEffectPublisher publisher, ExecutorService deliveries, Duration timeout) {
        this.publisher = publisher;
        this.deliveries = deliveries;
        this.timeout = timeout;
    }

    void publish(OutboxMessage message) throws Exception {
        if (deliveries == null) {
            publisher.publish(message);
            return;
        }
        if (stillRunning != null && !stillRunning.isDone()) {
            throw new TimeoutException("the publisher's call cut off at the delivery timeout (" + timeout.toMillis()
                    + " ms) has not returned yet; no second call is started beside it");
        }
        stillRunning = null;
        CompletableFuture<Void> returned = new CompletableFuture<>();
        Future<?> call = deliveries.submit(() -> {
            try {
                publisher.publish(message);
                return null;
            } finally {
                returned.complete(null);
            }
        });
        try {
            call.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            stillRunning = returned;
            throw new TimeoutException("the side-effect publisher did not return within the delivery timeout ("
                    + timeout.toMillis() + " ms, daemon.outbox-delivery-timeout)");
        } catch (InterruptedException e) {
            call.cancel(true);
            stillRunning = returned;
            Thread.currentThread().interrupt();
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
