package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.dialect.CommitSignals;
import dev.ferret.runtime.retry.Backoff;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Events committed on one node wake the detector of every node at once, where the engine pushes
 * ({@link CommitSignals}); elsewhere, and whenever a signal is lost, polling is the backstop, so nothing here decides
 * what is projected, only how soon.
 *
 * <p>Threads. {@link #committed} is called by appending threads after their commit: it only sets a flag, and at most
 * one send runs at a time, on the {@code threads} executor (the one the side-effect publisher is called on, apart
 * from the page loops); appends that commit while a send runs are folded into one more. The listening loop is one
 * task on the same executor: it keeps one connection of the store's own database, waits for signals in steps of at
 * most {@link #STEP}, and ends within one step of {@link #stop} (or of a probe, at most 2 s, when it was due). A
 * connection whose waits stay quiet is probed every few seconds, because a wait on a connection the server ended may
 * see nothing; a broken connection is replaced after a back-off
 * from the daemon's settings; the loop's state (the connection, the back-off) is its own, and the only fields shared
 * with other threads are the three flags and the stop latch.
 */
final class CommitPush {

    private static final Logger LOG = LoggerFactory.getLogger(CommitPush.class);
    /** The longest a listening wait lasts before the loop checks whether it should stop. */
    static final Duration STEP = Duration.ofMillis(500);
    /** Quiet steps after which the listening connection is probed: a lost one is found within about 5 s. */
    private static final int PROBE_AFTER_QUIET_STEPS = 10;
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    private final CommitSignals signals;
    private final DataSource dataSource;
    private final ExecutorService threads;
    private final Runnable wake;
    private final Backoff backoff;
    /** A commit not told yet. */
    private final AtomicBoolean sendPending = new AtomicBoolean();
    /** Whether the send task runs (or is queued): at most one does. */
    private final AtomicBoolean sending = new AtomicBoolean();
    private volatile CountDownLatch stopped = new CountDownLatch(0);
    private volatile boolean listening;

    CommitPush(CommitSignals signals, DataSource dataSource, ExecutorService threads, Runnable wake,
               Backoff backoff) {
        this.signals = signals;
        this.dataSource = dataSource;
        this.threads = threads;
        this.wake = wake;
        this.backoff = backoff;
    }

    /**
     * The push of a store whose engine has one and whose settings want it; null otherwise (or without threads for
     * blocking calls), and the daemon polls.
     */
    static CommitPush of(StoreContext context, DaemonSettings settings, DaemonExecutors executors, Runnable wake) {
        if (executors.deliveries() == null || !settings.isCommitSignals()) {
            return null;
        }
        return context.dialect().commitSignals(context.names())
                .map(signals -> new CommitPush(signals, context.dataSource(), executors.deliveries(), wake,
                        Backoff.of(settings)))
                .orElse(null);
    }

    /** Starts listening; a loop already running is left as it is. */
    synchronized void start() {
        if (stopped.getCount() > 0) {
            return;
        }
        CountDownLatch stop = new CountDownLatch(1);
        stopped = stop;
        try {
            threads.execute(() -> listen(stop));
        } catch (RejectedExecutionException e) {
            LOG.warn("No thread to listen for commits on channel {}; other nodes' appends are seen by polling",
                    signals.channel());
        }
    }

    /** Ends the listening loop within one {@link #STEP}; does not wait for it. */
    synchronized void stop() {
        stopped.countDown();
    }

    /** Whether the loop holds a listening connection now. */
    boolean listening() {
        return listening;
    }

    /** Events committed here: tell every node, once for a burst. Never blocks. */
    void committed() {
        sendPending.set(true);
        if (!sending.compareAndSet(false, true)) {
            // the send in flight takes this commit with it, or sends once more after it
            return;
        }
        try {
            threads.execute(this::sendWhilePending);
        } catch (RejectedExecutionException e) {
            // a stopping executor: the other nodes poll
            sending.set(false);
        }
    }

    /** The one send task: sends until no commit is left untold, then ends, unless a commit came in as it ended. */
    private void sendWhilePending() {
        while (true) {
            // cleared before the send: a commit after this point is sent again, none is folded away unsent
            if (sendPending.getAndSet(false)) {
                send();
                continue;
            }
            sending.set(false);
            if (!sendPending.get() || !sending.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void send() {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            signals.send(connection);
        } catch (SQLException | RuntimeException e) {
            LOG.debug("Could not signal channel {}; other nodes see the commit at their next poll", signals.channel(),
                    e);
        }
    }

    private void listen(CountDownLatch stop) {
        Backoff.Attempts waits = backoff.attempts();
        boolean failing = false;
        while (stop.getCount() > 0) {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                signals.listen(connection);
                listening = true;
                failing = false;
                waits.reset();
                // whatever committed while nobody listened (the first start, or the connection was lost) is looked for
                wake.run();
                try {
                    int quietSteps = 0;
                    while (stop.getCount() > 0) {
                        if (signals.await(connection, STEP)) {
                            quietSteps = 0;
                            wake.run();
                        } else if (++quietSteps >= PROBE_AFTER_QUIET_STEPS) {
                            // a wait on a connection the server ended may just see nothing: ask it
                            quietSteps = 0;
                            if (!connection.isValid((int) PROBE_TIMEOUT.toSeconds())) {
                                throw new SQLException("the listening connection no longer answers");
                            }
                        }
                    }
                } finally {
                    listening = false;
                    unlisten(connection);
                }
            } catch (SQLException | RuntimeException e) {
                Duration next = waits.next();
                if (!failing && stop.getCount() > 0) {
                    failing = true;
                    LOG.warn("Listening for commits on channel {} failed ({}); trying again from {} on, polling"
                            + " meanwhile", signals.channel(), e.toString(), next);
                }
                if (await(stop, next)) {
                    return;
                }
            }
        }
    }

    private void unlisten(Connection connection) {
        try {
            signals.unlisten(connection);
        } catch (SQLException | RuntimeException e) {
            // a broken connection listens no more
        }
    }

    /** Waits up to {@code delay}; true when stopped meanwhile. */
    private static boolean await(CountDownLatch stop, Duration delay) {
        try {
            return stop.await(delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }
}
