package dev.ferret.runtime.daemon;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.FutureTask;

/**
 * One run of a shard's page loop, handed to the workers. {@link #done()} clears it from the shard's
 * {@link ShardLifecycle} however it ends, including cancelled before it started, which is when nothing else would;
 * a run whose body started is cleared by the body's own end.
 */
final class LoopRun extends FutureTask<Void> {

    private final ShardLifecycle lifecycle;
    private final Runnable clearedUnstarted;
    /** The time source's reading when the run was created, to find one the workers accepted and never started. */
    final long submittedNanos;
    /** Set by the drain: the page must not commit, even if it ignores the interrupt and the abort. */
    volatile boolean cancelled;
    /** Completed when {@link #run()} returns: the body has ended, or will never start. */
    final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** Guarded by the lifecycle's monitor. */
    private boolean bodyStarted;

    LoopRun(ShardLifecycle lifecycle, Runnable body, long submittedNanos, Runnable clearedUnstarted) {
        super(body, null);
        this.lifecycle = lifecycle;
        this.submittedNanos = submittedNanos;
        this.clearedUnstarted = clearedUnstarted;
    }

    boolean bodyStarted() {
        synchronized (lifecycle) {
            return bodyStarted;
        }
    }

    @Override
    public void run() {
        try {
            synchronized (lifecycle) {
                if (lifecycle.run() != this || isDone()) {
                    cancel(false);
                    return;
                }
                bodyStarted = true;
            }
            super.run();
        } finally {
            ended.complete(null);
        }
    }

    @Override
    protected void done() {
        boolean cleared;
        synchronized (lifecycle) {
            cleared = !bodyStarted && lifecycle.release(this);
        }
        if (cleared) {
            clearedUnstarted.run();
        }
    }
}
