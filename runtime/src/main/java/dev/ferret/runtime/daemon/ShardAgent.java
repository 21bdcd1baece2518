package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.retry.Backoff;
import dev.ferret.runtime.retry.TransientRetry;
import dev.ferret.runtime.time.TimeSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one shard: loads pages above its progression up to the high water mark, applies them and commits each page's
 * documents with its progression in one transaction. Built from {@link ShardParts}, never from the daemon; it owns
 * the lifecycle and the page loop, and leaves reading a page to its {@link PageReader}, writing it to its
 * {@link PageWriter} and the listeners around it to its {@link PageListeners}.
 *
 * <h2>Lifecycle</h2>
 * The lifecycle fields ({@link #state}, {@link #stopRequested}, {@link #loop}, {@link #retryDueNanos}) belong to
 * this agent's monitor: every transition below takes it, so no flag can be left behind by a task that was
 * cancelled, refused or never ran. The page loop itself runs outside the monitor, on a worker.
 *
 * <table>
 * <caption>Transitions</caption>
 * <tr><th>from</th><th>event</th><th>to</th><th>what happens</th></tr>
 * <tr><td>STOPPED, PAUSED</td><td>{@link #start}</td><td>RUNNING (REBUILDING)</td>
 *     <td>error cleared, progression re-read, a loop run submitted</td></tr>
 * <tr><td>RUNNING, REBUILDING; RETRYING once its back-off is due</td><td>{@link #wake}, no loop run</td>
 *     <td>same</td><td>a {@link LoopRun} is submitted; a refused submission leaves no run, and the
 *     supervisor's {@link #heal} wakes it again</td></tr>
 * <tr><td>any</td><td>a loop run ends: finished, failed, cancelled before it started</td><td>same</td>
 *     <td>the run is cleared ({@link LoopRun#done()} or the run's own {@code finally}); woken again when
 *     still behind the mark</td></tr>
 * <tr><td>RUNNING, REBUILDING</td><td>transient failure (connection lost, deadlock)</td><td>RETRYING</td>
 *     <td>back-off timer; the supervisor wakes it if the timer is refused or dropped</td></tr>
 * <tr><td>RETRYING</td><td>a page commits</td><td>RUNNING (REBUILDING)</td><td>back-off reset</td></tr>
 * <tr><td>RUNNING, REBUILDING, RETRYING</td><td>apply error, progression moved by another runner (SOLO)</td>
 *     <td>PAUSED</td><td>until {@link #start} (restart, rebuild)</td></tr>
 * <tr><td>any</td><td>{@link #requestStop}</td><td>same</td><td>no page is loaded after the one in flight</td></tr>
 * <tr><td>any</td><td>{@link #awaitStop}</td><td>STOPPED (PAUSED stays)</td><td>waits for the run up to the
 *     deadline, then aborts the page's connection and cancels the run</td></tr>
 * </table>
 *
 * <p>The page loop's own fields ({@link #floor}, {@link #unresolved}, the page attempt) are written only by
 * the one loop run in flight (and by {@link #start} / {@link #resetForRebuild} while none is) and published through
 * volatiles for status and waiters. A connection is held only while a page loads or writes, never while the shard
 * waits.
 *
 * <p>A page whose commit fails may have committed anyway (the server committed, the reply was lost). Its outcome is
 * resolved before anything else: the progression row is read back on a fresh connection and compared with the
 * (end, stamp) the page wrote. Committed, its post-commit work runs once and the shard moves on; not committed, it is
 * re-processed. Until the outcome is known no page is loaded.
 *
 * <p>Side effects commit with the page: events its projections raised are appended on the page's connection (the
 * store's append path), and published messages are written to the shard's {@link ShardOutbox}, whose dispatcher
 * delivers them after the commit, on its own schedule: a failing publisher never holds the page loop. A rebuild
 * and a gated warm-up write neither. Post-commit and after-commit listeners stay in memory: at most once, for
 * every page that committed (including one whose commit was only learnt by reading it back).
 */
final class ShardAgent {

    private static final Logger LOG = LoggerFactory.getLogger(ShardAgent.class);
    /** How long past the drain deadline a cancelled page may take to unwind before it is left alone. */
    static final Duration CANCEL_GRACE = Duration.ofMillis(250);

    private final String name;
    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final ShardParts parts;
    private final StoreContext context;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    private final TimeSource time;
    private final TransientRetry retry;
    private final ShardOutbox outbox;
    private final PageReader reader;
    private final PageListeners listeners;
    private final PageWriter writer;
    private final CatchUpPageSize pageSize;

    // lifecycle: guarded by this
    private ShardState state = ShardState.STOPPED;
    private boolean stopRequested = true;
    private LoopRun loop;
    private long retryDueNanos;
    private Backoff.Attempts retryBackoff;
    /** Whether the stop in progress lets the outbox deliver what the committed pages wrote (not after a lost lock). */
    private boolean drainOutbox = true;
    /** In the budget's line: no run until the grant (which only the budget gives) wakes the shard. */
    private boolean inLineForRoom;
    /** Room the budget granted while the shard was in line, for its next page. */
    private LoadBudget.Reservation grantedRoom;
    private final LoadBudget.Waiter budgetWaiter = this::roomGranted;

    // published for status, waiters and the supervisor
    private volatile ShardState publishedState = ShardState.STOPPED;
    private volatile boolean stopping = true;
    private volatile long floor = -1;
    private volatile Throwable error;
    private volatile boolean rebuilding;
    /** The store-wide sequence an operator sent to the dead letters if it fails in the next page; -1: none. */
    private volatile long skipOnce = -1;
    /** The progression at which the rebuild in progress ends; written under this monitor. */
    private volatile long rebuildTarget = Long.MAX_VALUE;
    /** What the run before the rebuild had committed: only pages below it replay silently (their effects exist). */
    private volatile long rebuildSilentUntil;
    /** The time source's reading at this node's last commit of the shard; 0 before the first since the start. */
    private volatile long lastCommitNanos;
    /** Since when (time source reading) the supervisor has seen the shard behind its mark; 0 when caught up. */
    private volatile long behindSinceNanos;
    /** The connection of the page in flight, for cancelling it; null between pages. */
    private volatile Connection pageConnection;
    /** Set once the page in flight has committed, until the next page starts. */
    private volatile boolean pageCommitted;

    // the page loop's own: written only by the one loop run in flight
    /** A page whose commit failed after its work returned, until its outcome is known. */
    private volatile PageAttempt unresolved;
    /** While the shard's progression is below this, a gated version replays with side effects held back. */
    private volatile long warmUpUntil = -1;

    /** Built from the parts it uses; nothing runs until {@link #start}. */
    ShardAgent(String name, ProjectionApplier applier, LogPartition partition, ShardParts parts) {
        this.name = name;
        this.applier = applier;
        this.partition = partition;
        this.parts = parts;
        this.context = parts.context();
        this.dataSource = partition.database().dataSource();
        this.progression = parts.progression();
        this.time = parts.time();
        var settings = parts.settings();
        // a stopping shard never retries: the retry would redo, on a fresh connection, the page the drain cancelled
        this.retry = parts.retries().create(name, settings, e -> !stopping && context.dialect().isTransientCause(e));
        this.retryBackoff = Backoff.of(settings).attempts();
        this.outbox = parts.outboxes().of(name, partition.database(), parts);
        this.reader = new PageReader(applier, partition, parts);
        this.listeners = new PageListeners(name, parts);
        this.writer = new PageWriter(name, applier, partition, parts, outbox, listeners);
        this.pageSize = new CatchUpPageSize(settings, parts.budget());
    }

    String name() {
        return name;
    }

    ProjectionApplier applier() {
        return applier;
    }

    LogPartition partition() {
        return partition;
    }

    /** The mark this shard works towards: the store's, or its tenant's. */
    private long mark() {
        return parts.marks().markOf(partition);
    }

    long floor() {
        return floor;
    }

    ShardState state() {
        return publishedState;
    }

    ShardStatus status() {
        long now = time.nanoTime();
        long committed = lastCommitNanos;
        return new ShardStatus(name, publishedState, Math.max(0, floor), mark(), error,
                committed == 0 ? null : Duration.ofNanos(now - committed), stalledFor(now), outbox.status());
    }

    /**
     * How long the shard has been behind its mark, while it should run, without committing; zero otherwise. A
     * shard waiting for the budget or the throttles is behind and not committing too: the threshold must leave room
     * for that.
     */
    Duration stalledFor(long nowNanos) {
        long behindSince = behindSinceNanos;
        ShardState current = publishedState;
        if (behindSince == 0 || stopping || !(current == ShardState.RUNNING || current == ShardState.REBUILDING)) {
            return Duration.ZERO;
        }
        long since = Math.max(behindSince, lastCommitNanos);
        return Duration.ofNanos(Math.max(0, nowNanos - since));
    }

    /** Starts (or restarts) from the persisted progression. */
    void start() {
        // someone else may have run the shard since its last page, up to the very floor it will read
        writer.restarted();
        synchronized (this) {
            error = null;
            floor = -1;
            behindSinceNanos = 0;
            lastCommitNanos = 0;
            retryBackoff.reset();
            transition(rebuilding ? ShardState.REBUILDING : ShardState.RUNNING);
            stopRequested = false;
            stopping = false;
            drainOutbox = true;
        }
        parts.board().changed();
        // what an earlier owner of the shard (this node before a restart, or another) left undelivered goes out
        outbox.start();
        wake();
    }

    private void transition(ShardState next) {
        state = next;
        publishedState = next;
    }

    /** Called when the mark moves (and by the supervisor): runs the page loop unless it is running already. */
    void wake() {
        LoopRun run;
        synchronized (this) {
            if (stopRequested || loop != null || inLineForRoom || !wakeable(time.nanoTime())) {
                return;
            }
            run = new LoopRun();
            loop = run;
        }
        try {
            parts.workers().execute(run);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                if (loop == run) {
                    loop = null;
                }
            }
            LOG.warn("The workers refused a run of shard {} ({}); the supervisor wakes it again", name, e.toString());
        }
    }

    private boolean wakeable(long nowNanos) {
        return state == ShardState.RUNNING || state == ShardState.REBUILDING
                || state == ShardState.RETRYING && nowNanos - retryDueNanos >= 0;
    }

    /**
     * The supervisor's check: a shard that should run and has no loop run (its wake-up was refused, dropped or
     * cancelled) is woken; and the time it has been behind its mark is tracked for liveness.
     */
    void heal(long nowNanos) {
        boolean behind = floor < 0 || floor < mark();
        behindSinceNanos = behind ? (behindSinceNanos == 0 ? nowNanos : behindSinceNanos) : 0;
        boolean idle;
        LoopRun lost = null;
        synchronized (this) {
            if (loop != null && !loop.bodyStarted
                    && nowNanos - loop.submittedNanos > parts.settings().getStalledShardThreshold().toNanos()) {
                // accepted by the workers and never started: a container that dropped it while suspended
                lost = loop;
            }
            idle = !stopRequested && loop == null && !inLineForRoom && wakeable(nowNanos);
        }
        if (lost != null) {
            LOG.warn("A run of shard {} was queued for longer than the stalled-shard threshold without starting;"
                    + " submitting it again", name);
            lost.cancel(false);
            idle = true;
        }
        if (idle && behind) {
            wake();
        }
        outbox.heal();
    }

    /**
     * Asks the page loop to stop after the page in flight: pages behind it are not loaded (nothing marked them
     * complete, so the next owner resumes them from the progression row).
     */
    synchronized void requestStop() {
        stopRequested = true;
        stopping = true;
        // the outbox keeps delivering what the committed pages wrote: the drain waits for it within the bound
        outbox.kick();
    }

    /**
     * Under HotCold, the shard's lock is gone: like {@link #requestStop}, but its outbox stops delivering at once,
     * since the node that holds the lock now delivers the same rows.
     */
    synchronized void lockLost() {
        drainOutbox = false;
        requestStop();
        outbox.stop();
    }

    /**
     * The drain: waits until {@code deadlineNanos} (a {@link TimeSource} reading; {@code Long.MAX_VALUE} for no
     * bound) for the page in flight to finish and mark progression, then cancels it: its connection is aborted, so
     * the statement stops and the transaction rolls back, and it is re-processed on the next start. A page that
     * committed already keeps its after-commit listeners. Returns whether the loop ended in time.
     */
    boolean awaitStop(long deadlineNanos) {
        LoopRun running;
        synchronized (this) {
            running = loop;
        }
        boolean ended = true;
        if (running != null) {
            try {
                // cancelled before it started, or failed, it ended too: the run records its own failures
                if (!time.awaitDone(running, deadlineNanos)) {
                    ended = false;
                    cancelPageInFlight(running);
                    awaitUnwound(running, deadlineNanos);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ended = false;
                cancelPageInFlight(running);
            }
        }
        leaveBudgetLine();
        boolean drainingOutbox;
        synchronized (this) {
            drainingOutbox = drainOutbox;
        }
        if (drainingOutbox) {
            outbox.drain(deadlineNanos);
        } else {
            outbox.stop();
        }
        synchronized (this) {
            if (state != ShardState.PAUSED && state != ShardState.HELD) {
                transition(ShardState.STOPPED);
            }
        }
        parts.board().changed();
        return ended;
    }

    /**
     * After a cancel: a page that honours the interrupt or its aborted connection unwinds in moments (its
     * {@code finally} blocks give back its budget reservation and throttle slots); a page that does not is left to
     * end alone past {@link #CANCEL_GRACE} after the drain deadline.
     */
    private void awaitUnwound(LoopRun running, long deadlineNanos) {
        try {
            long until = deadlineNanos + CANCEL_GRACE.toNanos();
            if (!time.awaitDone(running.ended, until)) {
                LOG.warn("A cancelled page ignored its interrupt and its aborted connection; it is left to end alone");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@link #requestStop()} then {@link #awaitStop(long)} bounded by {@code timeout} (non-positive: no bound). */
    boolean stop(Duration timeout) {
        requestStop();
        return awaitStop(deadlineAfter(timeout, time));
    }

    /**
     * An operator's pause: drains the page in flight within {@code timeout} like a stop, then stays
     * {@link ShardState#HELD} (no error) until the next {@link #start}. Returns whether the page drained in time.
     */
    boolean hold(Duration timeout) {
        boolean drained = stop(timeout);
        synchronized (this) {
            error = null;
            transition(ShardState.HELD);
        }
        parts.board().changed();
        LOG.info("Shard {} is held by an operator at {}", name, floor);
        return drained;
    }

    /**
     * Restarts a shard paused on an event its projection refused; that event goes to the dead letters in the first
     * page if it fails again. Returns its sequence.
     *
     * @throws IllegalStateException when the shard is not paused on a refused event
     */
    long skipFailedEvent() {
        long sequence;
        synchronized (this) {
            if (state != ShardState.PAUSED || !(error instanceof ApplyFailedException failed)) {
                throw new IllegalStateException("shard " + name + " is " + state + ", not paused on an event its"
                        + " projection refused" + (error == null ? "" : " (" + error + ")"));
            }
            sequence = failed.sequence();
            skipOnce = sequence;
        }
        LOG.warn("Shard {} restarts past sequence {}: an operator sent it to the dead letters", name, sequence);
        start();
        return sequence;
    }

    /**
     * Applies the event of the dead letter {@code dead} again (see {@link PageWriter#replay}), with the page loop
     * stopped within {@code timeout} meanwhile and started again after when it was running; a held or paused shard
     * stays so. Its after-commit work (listeners, outbox delivery, raised events) runs as a page's does.
     */
    void replay(DeadLetterEvent dead, Duration timeout) throws SQLException {
        ShardState before = state();
        if (before == ShardState.REBUILDING) {
            throw new IllegalStateException("shard " + name + " is rebuilding; replay its dead letters after");
        }
        boolean looping = before == ShardState.RUNNING || before == ShardState.RETRYING;
        if (looping) {
            stop(timeout);
        }
        try {
            LoadedPage page = reader.loadEvent(dead.sequence());
            PageAttempt attempt = new PageAttempt(page.floor(), page.end(),
                    OffsetDateTime.now(context.clock()).truncatedTo(ChronoUnit.MILLIS), false, false);
            attempt.startedNanos = time.nanoTime();
            writer.replay(page, attempt, dead.id());
            LOG.info("Shard {} applied dead letter {} (sequence {}) again", name, dead.id(), dead.sequence());
            listeners.postCommit(attempt.batch);
            if (attempt.appendedEvents) {
                parts.eventsRaised().run();
            }
            listeners.afterCommit(attempt.changeSets);
            outbox.committed(attempt.outboxWritten);
        } finally {
            if (looping) {
                start();
            }
        }
    }

    /** The drain deadline {@code timeout} from now on {@code time}; {@code Long.MAX_VALUE} for no bound. */
    static long deadlineAfter(Duration timeout, TimeSource time) {
        return timeout.isNegative() || timeout.isZero() ? Long.MAX_VALUE : time.nanoTime() + timeout.toNanos();
    }

    private void cancelPageInFlight(LoopRun running) {
        boolean started;
        synchronized (this) {
            started = running.bodyStarted;
        }
        if (started && pageCommitted) {
            // only the after-commit listeners are left; the stop must not cut them off
            LOG.warn("Shard {} is still running after-commit listeners of a committed page past the drain bound", name);
            return;
        }
        running.cancelled = true;
        Connection connection = pageConnection;
        if (connection != null) {
            try {
                connection.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                LOG.debug("Aborting the connection of shard {} failed", name, e);
            }
        }
        running.cancel(true);
        LOG.warn("Shard {} did not drain within the stop bound; its page in flight was cancelled and rolled back"
                + " and will be re-processed by the next owner", name);
    }

    /**
     * With the loop stopped: the next start replays from zero until the page that reaches {@code target} commits,
     * with listeners and side effects suppressed only up to {@code previouslyCommitted} (what the run before had
     * committed, so published): pages never cross it, and every event above it publishes as a live page does; the agent then ends the rebuild itself, so that one whose caller stopped waiting (a
     * timeout, a console) still goes live when it catches up.
     */
    synchronized void rebuildTo(long target, long previouslyCommitted) {
        rebuildTarget = target;
        rebuildSilentUntil = previouslyCommitted;
        resetForRebuild(true);
    }

    /** The page loop's check after each commit: a rebuild that reached its target ends here. */
    private void endRebuildAt(long progression) {
        if (rebuilding && progression >= rebuildTarget) {
            resetForRebuild(false);
            LOG.info("Shard {} caught up with its rebuild's target {}; it runs live from here", name, rebuildTarget);
        }
    }

    /** With the loop stopped: on, the next start replays from zero with listeners suppressed; off, it runs live. */
    synchronized void resetForRebuild(boolean on) {
        rebuilding = on;
        if (on) {
            // the teardown removes the row it would be read back from; the replay redoes what it committed
            unresolved = null;
        }
        if (!on && state == ShardState.REBUILDING) {
            transition(ShardState.RUNNING);
        }
    }

    /**
     * One run of the page loop. {@link #done()} is called however it ends, including cancelled before it started,
     * which is when nothing else would clear it; a run cancelled while its body runs is cleared by the body.
     */
    private final class LoopRun extends FutureTask<Void> {
        private final long submittedNanos = time.nanoTime();
        /** Set by the drain: the page must not commit, even if it ignores the interrupt and the abort. */
        private volatile boolean cancelled;
        /** Completed when {@link #run()} returns: the body has ended, or will never start. */
        private final CompletableFuture<Void> ended = new CompletableFuture<>();
        private boolean bodyStarted;

        LoopRun() {
            super(ShardAgent.this::runLoop, null);
        }

        @Override
        public void run() {
            try {
                synchronized (ShardAgent.this) {
                    if (loop != this || isDone()) {
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
            boolean cleared = false;
            synchronized (ShardAgent.this) {
                if (!bodyStarted && loop == this) {
                    loop = null;
                    cleared = true;
                }
            }
            if (cleared) {
                parts.board().changed();
            }
        }
    }

    private void runLoop() {
        pageCommitted = false;
        try {
            resolveUnknownCommit();
            if (floor < 0 && applier.startsFromPresent()) {
                if (!parts.marks().known(partition)) {
                    // the mark of "present" is not read yet; the supervisor wakes it after the detector's first read
                    return;
                }
                floor = retry.call(this::startFromPresent);
            } else if (floor < 0) {
                long persisted = retry.call(this::readProgression);
                if (applier.gatesSideEffects()) {
                    // snapshotted at each start: an interrupted warm-up resumes held back
                    long prior = retry.call(this::priorVersionsMark);
                    warmUpUntil = persisted < prior ? prior : -1;
                    if (warmUpUntil > 0) {
                        LOG.info("Shard {} replays to {} (the prior version's mark) with side effects held back",
                                name, prior);
                    }
                }
                floor = persisted;
                pageSize.reset();
            }
            // one page a turn: the worker goes back to the line, so every shard with work gets its page in turn
            boolean inLine = !stopping && floor < mark() && !retry.call(this::processPage);
            if (!inLine) {
                recovered();
            }
        } catch (ProgressionConflictException e) {
            if (stopping) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else if (parts.settings().getMode() == DaemonMode.HOT_COLD) {
                // this node holds the lock, so the other runner is a node that lost it and has not noticed yet;
                // its monitor stops it: resume from the row it left
                LOG.warn("Shard {} found its progression moved by a node that lost the lock; resuming from the"
                        + " persisted progression", name);
                floor = -1;
                backOff(e);
            } else {
                pause(e);
            }
        } catch (ApplyFailedException e) {
            if (stopping) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else {
                pause(e);
            }
        } catch (Throwable e) {
            if (stopping) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else if (context.dialect().isTransientCause(e)) {
                backOff(e);
            } else {
                pause(e);
            }
        } finally {
            synchronized (this) {
                loop = null;
            }
            parts.board().changed();
            if (floor >= 0 && floor < mark()) {
                wake();
            }
        }
    }

    private synchronized void recovered() {
        if (state == ShardState.RETRYING) {
            transition(rebuilding ? ShardState.REBUILDING : ShardState.RUNNING);
            error = null;
            retryBackoff.reset();
        }
    }

    private synchronized void pause(Throwable e) {
        error = e;
        transition(ShardState.PAUSED);
        LOG.error("Shard {} paused at {}: {}", name, floor, e.toString(), e);
    }

    private void backOff(Throwable e) {
        Duration delay;
        synchronized (this) {
            error = e;
            transition(ShardState.RETRYING);
            delay = retryBackoff.next();
            retryDueNanos = time.nanoTime() + delay.toNanos();
        }
        LOG.warn("Shard {} backs off ({}); retrying in {}", name, e.toString(), delay);
        parts.metrics().retried(name);
        try {
            parts.scheduler().schedule(this::wake, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException refused) {
            LOG.warn("The scheduler refused the retry of shard {}; the supervisor wakes it when it is due", name);
        }
    }

    /** Moves the progression row up to the current mark, ignoring history, and starts there. */
    private long startFromPresent() throws SQLException {
        long present = mark();
        progression.raise(dataSource, name, present, OffsetDateTime.now(context.clock()));
        LOG.info("Shard {} subscribes from the present: starting at {}", name, present);
        return readProgression();
    }

    private long readProgression() throws SQLException {
        return progression.read(dataSource, name);
    }

    /** One page; false when the shard joined the budget's line instead (the grant wakes it, holding no thread). */
    private boolean processPage() throws SQLException {
        resolveUnknownCommit();
        // read once: a rebuild may end while this page is in flight, and its listeners must stay silent
        boolean silent = rebuilding && floor < rebuildSilentUntil;
        boolean warmingUp = floor < warmUpUntil;
        pageCommitted = false;
        LoadBudget.Reservation room = takeRoom();
        if (room == null) {
            return false;
        }
        int limit = limitWithin(pageSize.next(), room);
        PageAttempt attempt;
        LoadedPage page;
        boolean done = false;
        long startedNanos = time.nanoTime();
        try {
            long from = floor;
            page = parts.limits().loading(partition.database(),
                    () -> reader.load(from, upperBound(from), limit, connection -> pageConnection = connection));
            parts.budget().trim(room, page.events().size());
            // millisecond precision survives every engine's timestamp column, so the stamp reads back equal
            attempt = new PageAttempt(page.floor(), page.end(),
                    OffsetDateTime.now(context.clock()).truncatedTo(ChronoUnit.MILLIS), silent, warmingUp);
            attempt.startedNanos = startedNanos;
            PageAttempt writing = attempt;
            try {
                long skipping = skipOnce;
                parts.limits().writing(partition.database(),
                        () -> writer.write(page, writing, new InFlight(), skipping));
            } catch (SQLException | RuntimeException e) {
                if (!writing.reachedCommit || e instanceof ProgressionConflictException) {
                    throw e;
                }
                // the server may have committed and only the reply was lost: never re-process before knowing
                LOG.warn("The commit of shard {}'s page ({}, {}] failed ({}); reading back whether it committed",
                        name, writing.floor, writing.end, e.toString());
                unresolved = writing;
                resolveUnknownCommit();
                done = true;
                return true;
            }
            done = true;
        } finally {
            parts.budget().release(room);
            if (!done) {
                pageSize.reset();
            }
        }
        committed(attempt);
        pageSize.committed(limit, page.rows());
        return true;
    }

    /**
     * A page's upper bound: the mark, but a warm-up page never crosses the prior version's mark, nor a silent
     * rebuild page what the run before the rebuild had committed.
     */
    private long upperBound(long from) {
        long mark = mark();
        if (rebuilding && from < rebuildSilentUntil) {
            // a silent replay page never reaches events the previous run had not published
            mark = Math.min(mark, rebuildSilentUntil);
        }
        return from < warmUpUntil ? Math.min(mark, warmUpUntil) : mark;
    }

    /** The most rows a page may read: the page size, within a bounded budget's grant. */
    private static int limitWithin(int size, LoadBudget.Reservation room) {
        return room.events() > 0 ? (int) Math.min(size, room.events()) : size;
    }

    /**
     * Settles a page whose commit outcome is unknown, on a fresh connection: committed, its post-commit work runs
     * now; not committed, the page is loaded again. Throws (and keeps the page unresolved) while the database cannot
     * be read; a progression that neither attempt nor floor explains is a conflict.
     */
    private void resolveUnknownCommit() throws SQLException {
        PageAttempt attempt = unresolved;
        if (attempt == null) {
            return;
        }
        Optional<ProgressionRows.Stamped> row = progression.readStamped(dataSource, name);
        Long at = row.map(ProgressionRows.Stamped::lastSeqId).orElse(null);
        OffsetDateTime stamp = row.map(ProgressionRows.Stamped::lastUpdated).orElse(null);
        unresolved = null;
        if (at != null && at == attempt.end && stamp != null && stamp.toInstant().equals(attempt.stamp.toInstant())) {
            LOG.info("Shard {}'s page ({}, {}] committed although its commit reported a failure; running its"
                    + " post-commit work once", name, attempt.floor, attempt.end);
            committed(attempt);
        } else if (at == null ? attempt.floor == 0 : at == attempt.floor) {
            LOG.info("Shard {}'s page ({}, {}] did not commit; it is processed again", name, attempt.floor,
                    attempt.end);
        } else {
            throw new ProgressionConflictException(name, attempt.floor);
        }
    }

    /**
     * What follows a page's commit: subscription listeners, async listeners, the outbox's delivery, then the
     * progress.
     */
    private void committed(PageAttempt attempt) {
        pageCommitted = true;
        pageConnection = null;
        lastCommitNanos = time.nanoTime();
        writer.committed(attempt);
        PageBatch batch = attempt.batch;
        if (batch != null) {
            listeners.postCommit(batch);
        }
        if (attempt.appendedEvents) {
            // the raised events are new events for every shard: a loop lost to a suspended container comes back now
            parts.eventsRaised().run();
        }
        if (attempt.warmingUp && attempt.end >= warmUpUntil) {
            LOG.info("Shard {} warmed up to the prior version's mark {}; side effects fire from here", name,
                    warmUpUntil);
        }
        if (!attempt.silent) {
            // before the progress is published, so a reader released by a non-stale wait sees the caches flushed
            listeners.afterCommit(attempt.changeSets);
        }
        // the page's messages are durable in the outbox since its commit; delivering them only needs a kick
        outbox.committed(attempt.outboxWritten);
        // after a restart the loop re-reads the progression; only a loop at the page's floor moves on from it
        if (floor == attempt.floor) {
            floor = attempt.end;
        }
        endRebuildAt(floor);
        // the first page after a skip starts at the refused event, so it has dealt with it (a tenant's page counts
        // in the tenant's own numbers, the skip in the store's: they are not compared)
        skipOnce = -1;
        // after the floor moved: a collection never sees the page's events counted ahead of the progression
        parts.metrics().pageCommitted(name, attempt.events, Duration.ofNanos(lastCommitNanos - attempt.startedNanos),
                attempt.stamp, attempt.silent);
        if (attempt.deadLetters > 0) {
            parts.metrics().deadLettered(name, attempt.deadLetters);
        }
        parts.board().changed();
    }

    /**
     * The room granted while the shard waited in line, or room now, or null with the shard in line: it then holds no
     * thread until {@link #roomGranted} wakes it.
     */
    private LoadBudget.Reservation takeRoom() {
        synchronized (this) {
            LoadBudget.Reservation granted = grantedRoom;
            if (granted != null) {
                grantedRoom = null;
                return granted;
            }
        }
        LoadBudget.Reservation now = parts.budget().tryReserve(pageSize.next(), budgetWaiter);
        if (now == null) {
            synchronized (this) {
                // the grant may have come between the two: then it is waiting in grantedRoom
                inLineForRoom = grantedRoom == null;
            }
        }
        return now;
    }

    /** The budget's hand-over, on the thread that freed the room. */
    private void roomGranted(LoadBudget.Reservation room) {
        synchronized (this) {
            inLineForRoom = false;
            if (!stopRequested) {
                grantedRoom = room;
                room = null;
            }
        }
        if (room != null) {
            parts.budget().release(room); // stopped while in line
            return;
        }
        wake();
    }

    /** What the page writer tells this agent, and asks it, while the page's transaction runs. */
    private final class InFlight implements PageWriter.InFlight {

        @Override
        public void connected(Connection connection) {
            pageConnection = connection;
        }

        @Override
        public boolean stopping() {
            return stopping;
        }

        /** Whether the drain cancelled the run this thread is in. */
        @Override
        public boolean cancelledByDrain() {
            LoopRun current;
            synchronized (ShardAgent.this) {
                current = loop;
            }
            return Thread.currentThread().isInterrupted() && stopping || current != null && current.cancelled;
        }
    }

    /** After a stop: the shard leaves the budget's line, and room granted but not used goes back. */
    private void leaveBudgetLine() {
        parts.budget().leave(budgetWaiter);
        LoadBudget.Reservation unused;
        synchronized (this) {
            inLineForRoom = false;
            unused = grantedRoom;
            grantedRoom = null;
        }
        parts.budget().release(unused);
    }

    /** The highest progression any prior version of this projection persisted. */
    private long priorVersionsMark() throws SQLException {
        List<String> prior = new ArrayList<>();
        for (int version = 1; version < applier.version(); version++) {
            prior.add(partition.shardName(AsyncDaemon.shardName(applier.name(), version)));
        }
        return progression.highest(dataSource, prior);
    }


}
