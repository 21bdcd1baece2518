package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.TimeSource;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background loop on the daemon's scheduler that cannot die silently: each run schedules the next one, and when a
 * run is refused (the container is suspended), dropped (the container accepted it and never ran it), cancelled or
 * fails, {@link #rearmIfOverdue()} (called by the daemon's supervisor and by every status read) schedules it again.
 *
 * <p>The loop owns its body, its pending future, its due time and its counters under its own monitor; the body is
 * handed over at {@link #start}, so an owner can build its loops in its constructor without handing itself out, and
 * runs on the scheduler thread, outside the monitor, so a slow body never blocks a status read.
 */
final class RearmingLoop {

    private static final Logger LOG = LoggerFactory.getLogger(RearmingLoop.class);

    /** What one run does; returns the delay before the next run. Any failure is the loop's to survive. */
    @FunctionalInterface
    interface Body {
        Duration runOnce() throws Exception;
    }

    private final String name;
    private final ScheduledExecutorService scheduler;
    private final Duration afterFailure;
    /** Past its due time by this much, a run that has not started counts as lost. */
    private final Duration grace;
    private final TimeSource time;

    private Body body;
    private ScheduledFuture<?> pending;
    private long dueNanos;
    private boolean running;
    /** Asked to run again as soon as the run in flight ends ({@link #runSoon} during a run). */
    private boolean soonAgain;
    private boolean stopped = true;
    private long lastCompletedNanos;
    private long refusals;
    /** Refusals since the last accepted run: the first of an outage is logged, the rest only counted. */
    private long refusedInARow;
    private long rearms;

    /**
     * How late a run may start before it counts as lost: the daemon's scheduler may be busy that long with a detection
     * waiting on the append fence and a lock probe.
     */
    static Duration graceOn(DaemonSettings settings) {
        return settings.getPollingInterval().plus(settings.getAppendFenceTimeout()).plus(settings.getProbeTimeout());
    }

    RearmingLoop(String name, ScheduledExecutorService scheduler, Duration afterFailure, Duration grace,
                 TimeSource time) {
        this.name = name;
        this.scheduler = scheduler;
        this.afterFailure = afterFailure;
        this.grace = grace;
        this.time = time;
    }

    /** Starts the loop running {@code body}: its first run after {@code delay}. */
    synchronized void start(Body body, Duration delay) {
        this.body = body;
        stopped = false;
        lastCompletedNanos = time.nanoTime();
        arm(delay);
    }

    /** Ends the loop: the pending run is cancelled and no run schedules another. */
    synchronized void stop() {
        stopped = true;
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }

    /**
     * Schedules the next run unless one is pending. A refused submission leaves the loop unarmed with its due time
     * set, so the next {@link #rearmIfOverdue()} after it tries again.
     */
    private synchronized void arm(Duration delay) {
        if (stopped) {
            return;
        }
        dueNanos = time.nanoTime() + delay.toNanos();
        try {
            pending = scheduler.schedule(this::run, delay.toMillis(), TimeUnit.MILLISECONDS);
            if (refusedInARow > 0) {
                LOG.info("The scheduler accepts runs of {} again after {} refusals", name, refusedInARow);
                refusedInARow = 0;
            }
        } catch (RejectedExecutionException e) {
            pending = null;
            refusals++;
            if (refusedInARow++ == 0) {
                LOG.warn("The scheduler refused the next run of {} ({}); it is scheduled again when the daemon"
                        + " supervisor, a status read or an append finds it missing", name, e.toString());
            }
        }
    }

    private void run() {
        Body current;
        synchronized (this) {
            if (stopped || running) {
                return;
            }
            running = true;
            pending = null;
            current = body;
        }
        Duration next = afterFailure;
        try {
            next = current.runOnce();
        } catch (Throwable e) {
            LOG.warn("A run of {} failed; the next one is in {}", name, afterFailure, e);
        } finally {
            synchronized (this) {
                running = false;
                lastCompletedNanos = time.nanoTime();
                arm(soonAgain ? Duration.ZERO : next);
                soonAgain = false;
            }
        }
    }

    /**
     * Brings the next run forward to now: a run in flight is followed at once by another, a pending one is
     * replaced by one due now. Calls while one is due already coalesce, so a burst of calls costs one run.
     */
    synchronized void runSoon() {
        if (stopped) {
            return;
        }
        if (running) {
            soonAgain = true;
            return;
        }
        if (pending != null && !pending.isDone() && dueNanos - time.nanoTime() <= 0) {
            return;
        }
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
        arm(Duration.ZERO);
    }

        /**
     * Schedules the loop again when its next run is overdue by more than the grace (refused, dropped or cancelled).
     * Returns whether it did.
     */
    synchronized boolean rearmIfOverdue() {
        if (stopped || running) {
            return false;
        }
        long now = time.nanoTime();
        boolean lost = pending == null || pending.isCancelled() || pending.isDone()
                || now - dueNanos > grace.toNanos();
        if (!lost) {
            return false;
        }
        if (pending != null) {
            // accepted and never run (dropped) or cancelled; a refusal was logged when it happened
            pending.cancel(false);
            pending = null;
            LOG.warn("{} missed its run (due {} ms ago); scheduling it again", name,
                    TimeUnit.NANOSECONDS.toMillis(now - dueNanos));
        }
        rearms++;
        arm(Duration.ZERO);
        return true;
    }

    /** Time since the last run ended (or since the start, before the first run). */
    synchronized Duration sinceLastRun() {
        return Duration.ofNanos(Math.max(0, time.nanoTime() - lastCompletedNanos));
    }

    synchronized boolean armed() {
        return !stopped && (running || pending != null);
    }

    synchronized long refusals() {
        return refusals;
    }

    synchronized long rearms() {
        return rearms;
    }

    String name() {
        return name;
    }
}
