package dev.ferret.runtime.daemon;

import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.daemon.ShardLifecycle.Event;
import dev.ferret.runtime.daemon.ShardLifecycle.Phase;
import dev.ferret.runtime.daemon.ShardLifecycle.State;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.Backoff;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one shard: its {@link ShardLifecycle} (every state change), its {@link PageLoop} (one page a turn, on a
 * worker), its place in the budget's line and its outbox. Built from {@link ShardParts}, never from the daemon.
 *
 * <p>Each verb here is a lifecycle event: {@link #start}, {@link #wake}, {@link #requestStop}, {@link #lockLost},
 * the drain's end ({@link #awaitStop}), {@link #hold}, {@link #skipFailedEvent}, {@link #rebuildTo}; a turn of the
 * page loop reports its own (committed, transient failure, apply failure, conflict). The lifecycle's monitor guards
 * the state, the run in flight and the budget line together, so no flag can be left behind by a task that was
 * cancelled, refused or never ran. The page loop runs outside the monitor.
 *
 * <p>Side effects commit with the page: events its projections raised are appended on the page's connection, and
 * published messages are written to the shard's {@link ShardOutbox}, whose dispatcher delivers them after the
 * commit, on its own schedule: a failing publisher never holds the page loop. A rebuild and a gated warm-up write
 * neither. Post-commit and after-commit listeners stay in memory: at most once, for every page that committed
 * (including one whose commit was only learnt by reading it back).
 */
final class ShardAgent {

    private static final Logger LOG = LoggerFactory.getLogger(ShardAgent.class);
    /** How long past the drain deadline a cancelled page may take to unwind before it is left alone. */
    static final Duration CANCEL_GRACE = ShardDrain.CANCEL_GRACE;

    private final String name;
    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final ShardParts parts;
    private final TimeSource time;
    private final ShardOutbox outbox;
    private final ShardLifecycle lifecycle;
    private final BudgetLine line;
    private final PageLoop pages;
    private final ShardDrain drain;
    private final ShardGroups.Group group;
    /** Its row in the summary's columns: its lifecycle writes the state there, its loop the floor. */
    private final ShardColumns.Slot slot;
    /** How long a run may wait in the workers' queue before the supervisor submits it again. */
    private final long stalledNanos;

    /** Whether the stop in progress lets the outbox deliver what the committed pages wrote (not after a lost lock). */
    private boolean drainOutbox = true; // guarded by lifecycle
    /** Since when (time source reading) the supervisor has seen the shard behind its mark; 0 when caught up. */
    private volatile long behindSinceNanos;

    /** Built from the parts it uses; nothing runs until {@link #start}. */
    ShardAgent(String name, ProjectionApplier applier, LogPartition partition, ShardParts parts) {
        this.name = name;
        this.applier = applier;
        this.partition = partition;
        this.parts = parts;
        this.time = parts.time();
        this.group = parts.groups().of(applier.name(), partition.database().name());
        this.slot = parts.groups().slot(group, name, parts.marks().cellOf(partition));
        this.lifecycle = new ShardLifecycle(name, Backoff.of(parts.settings()).attempts(), slot::state);
        this.line = new BudgetLine(parts.budget(), lifecycle, this::wake);
        this.outbox = parts.outboxes().of(name, partition.database(), parts);
        this.pages = new PageLoop(name, applier, partition, parts, lifecycle, line, outbox, slot::floor);
        this.drain = new ShardDrain(name, lifecycle, pages, line, outbox, parts);
        this.stalledNanos = parts.settings().getStalledShardThreshold().toNanos();
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

    /** Its row in the summary's columns, counted while it is registered. */
    ShardColumns.Slot slot() {
        return slot;
    }

    /** Its projection's and database's group, for the status summary. */
    ShardGroups.Group group() {
        return group;
    }

    long floor() {
        return pages.floor();
    }

    ShardState state() {
        return lifecycle.state();
    }

    /** Why it is paused or retrying, else null. */
    Throwable error() {
        return lifecycle.error();
    }

    /** The lifecycle pairs this shard refused: a bug each. */
    long lifecycleRefusals() {
        return lifecycle.refusals();
    }

    /** What status shows of the shard; {@code runsHere} is the HotCold ownership's answer. */
    ShardStatus status(boolean runsHere) {
        long now = time.nanoTime();
        long committed = pages.lastCommitNanos();
        return new ShardStatus(name, lifecycle.state(), Math.max(0, pages.floor()), pages.mark(), lifecycle.error(),
                committed == 0 ? null : Duration.ofNanos(now - committed), stalledFor(now), outbox.status(),
                applier.name(), partition.tenantId(), runsHere, partition.database().name(),
                parts.reads().servesReads(applier.name(), applier.version(), tenantOrDefault()));
    }

    private String tenantOrDefault() {
        return partition.perTenant() ? partition.tenantId() : StoreOptions.DEFAULT_TENANT;
    }

    /** How many sequence numbers it is behind its mark, as {@link ShardStatus#lag()}. */
    long lag() {
        return Math.max(0, pages.mark() - Math.max(0, pages.floor()));
    }

    /**
     * How long the shard has been behind its mark, while it should run, without committing; zero otherwise. A
     * shard waiting for the budget or the throttles is behind and not committing too: the threshold must leave room
     * for that.
     */
    Duration stalledFor(long nowNanos) {
        long behindSince = behindSinceNanos;
        ShardState current = lifecycle.state();
        // the supervisor's pass may not have seen it catch up yet
        long floor = pages.floor();
        if (behindSince == 0 || (floor >= 0 && floor >= pages.mark()) || lifecycle.stopping()
                || !(current == ShardState.RUNNING || current == ShardState.REBUILDING)) {
            return Duration.ZERO;
        }
        long since = Math.max(behindSince, pages.lastCommitNanos());
        return Duration.ofNanos(Math.max(0, nowNanos - since));
    }

    /** Starts (or restarts) from the persisted progression. */
    void start() {
        start(Event.START);
    }

    private void start(Event event) {
        synchronized (lifecycle) {
            if (lifecycle.fire(event).isEmpty()) {
                return;
            }
            pages.restarted();
            behindSinceNanos = 0;
            drainOutbox = true;
        }
        parts.board().changed();
        // what an earlier owner of the shard (this node before a restart, or another) left undelivered goes out
        outbox.start();
        wake();
    }

    /**
     * The daemon could not reach this shard's database for a while: its next turn looks for committed pages the
     * database lost ({@link LostPages}) before anything else.
     */
    void recheckProgression() {
        pages.recheckProgression();
        wake();
    }

    /** Called when the mark moves (and by the supervisor): runs the page loop unless it is running already. */
    void wake() {
        LoopRun run;
        synchronized (lifecycle) {
            lifecycle.fire(Event.WAKE);
            long now = time.nanoTime();
            if (line.inLine() || !lifecycle.wakeable(now)) {
                return;
            }
            LoopRun[] self = new LoopRun[1];
            run = new LoopRun(lifecycle, () -> runTurn(self[0]), now, parts.board()::changed);
            self[0] = run;
            lifecycle.claim(run, now);
        }
        try {
            parts.workers().execute(run);
        } catch (RejectedExecutionException e) {
            lifecycle.release(run);
            LOG.warn("The workers refused a run of shard {} ({}); the supervisor wakes it again", name, e.toString());
        }
    }

    /**
     * The supervisor's check: a shard that should run and has no loop run (its wake-up was refused, dropped or
     * cancelled) is woken; and the time it has been behind its mark is tracked for liveness.
     */
    void heal(long nowNanos) {
        long floor = pages.floor();
        boolean behind = floor < 0 || floor < pages.mark();
        behindSinceNanos = behind ? (behindSinceNanos == 0 ? nowNanos : behindSinceNanos) : 0;
        boolean idle;
        LoopRun lost = null;
        synchronized (lifecycle) {
            LoopRun run = lifecycle.run();
            if (run != null && !run.bodyStarted()
                    && nowNanos - run.submittedNanos > stalledNanos) {
                // accepted by the workers and never started: a container that dropped it while suspended
                lost = run;
            }
            idle = !line.inLine() && lifecycle.wakeable(nowNanos);
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

    /** The body of a loop run: one turn of the page loop, its outcome applied, and a wake-up while behind. */
    private void runTurn(LoopRun run) {
        try {
            report(pages.turn());
        } finally {
            // only this run: one the drain gave up on must not clear the run of a later start
            lifecycle.release(run);
            parts.board().changed();
            long floor = pages.floor();
            if (floor >= 0 && floor < pages.mark()) {
                wake();
            }
        }
    }

    private void report(PageLoop.Turn turn) {
        if (turn.event() == null) {
            return;
        }
        if (turn.cause() != null && lifecycle.stopping()) {
            LOG.debug("Shard {} stopped with a page in flight", name, turn.cause());
        }
        Optional<State> next = lifecycle.fire(turn.event(), turn.cause(), time.nanoTime());
        Phase phase = next.map(State::phase).orElse(null);
        if (turn.cause() == null || phase == null) {
            return;
        }
        if (phase == Phase.PAUSED) {
            LOG.error("Shard {} paused at {}: {}", name, pages.floor(), turn.cause().toString(), turn.cause());
        } else if (phase == Phase.RETRYING) {
            backOff(turn.cause());
        }
    }

    private void backOff(Throwable e) {
        Duration delay = lifecycle.retryDelay(time.nanoTime());
        LOG.warn("Shard {} backs off ({}); retrying in {}", name, e.toString(), delay);
        parts.metrics().retried(pages.label());
        try {
            parts.scheduler().schedule(this::wake, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException refused) {
            LOG.warn("The scheduler refused the retry of shard {}; the supervisor wakes it when it is due", name);
        }
    }

    /**
     * Asks the page loop to stop after the page in flight: pages behind it are not loaded (nothing marked them
     * complete, so the next owner resumes them from the progression row).
     */
    void requestStop() {
        lifecycle.fire(Event.REQUEST_STOP);
        // the outbox keeps delivering what the committed pages wrote: the drain waits for it within the bound
        outbox.kick();
    }

    /**
     * Under HotCold, the shard's lock is gone: like {@link #requestStop}, but its outbox stops delivering at once,
     * since the node that holds the lock now delivers the same rows.
     */
    void lockLost() {
        synchronized (lifecycle) {
            drainOutbox = false;
            lifecycle.fire(Event.LOCK_LOST);
        }
        outbox.kick();
        outbox.stop();
    }

    /**
     * The drain (see {@link ShardDrain}): waits until {@code deadlineNanos} (a {@link TimeSource} reading;
     * {@code Long.MAX_VALUE} for no bound) for the page in flight, then cancels it; then the outbox drains, or stops
     * after a lost lock. Returns whether the loop ended in time.
     */
    boolean awaitStop(long deadlineNanos) {
        boolean drainingOutbox;
        synchronized (lifecycle) {
            drainingOutbox = drainOutbox;
        }
        return drain.await(deadlineNanos, drainingOutbox);
    }

    /** {@link #requestStop()} then {@link #awaitStop(long)} bounded by {@code timeout} (non-positive: no bound). */
    boolean stop(Duration timeout) {
        requestStop();
        return awaitStop(deadlineAfter(timeout, time));
    }

    /** The drain deadline {@code timeout} from now on {@code time}; {@code Long.MAX_VALUE} for no bound. */
    static long deadlineAfter(Duration timeout, TimeSource time) {
        return timeout.isNegative() || timeout.isZero() ? Long.MAX_VALUE : time.nanoTime() + timeout.toNanos();
    }

    /**
     * An operator's pause: drains the page in flight within {@code timeout} like a stop, then stays
     * {@link ShardState#HELD} (no error) until the next {@link #start}. Returns whether the page drained in time.
     */
    boolean hold(Duration timeout) {
        boolean drained = stop(timeout);
        lifecycle.fire(Event.HOLD);
        parts.board().changed();
        LOG.info("Shard {} is held by an operator at {}", name, pages.floor());
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
        synchronized (lifecycle) {
            Throwable error = lifecycle.errorNow();
            if (lifecycle.current().phase() != Phase.PAUSED || !(error instanceof ApplyFailedException failed)) {
                throw new IllegalStateException("shard " + name + " is " + lifecycle.state() + ", not paused on an"
                        + " event its projection refused" + (error == null ? "" : " (" + error + ")"));
            }
            sequence = failed.sequence();
            pages.skipOnce(sequence);
        }
        LOG.warn("Shard {} restarts past sequence {}: an operator sent it to the dead letters", name, sequence);
        start(Event.SKIP);
        return sequence;
    }

    /**
     * Applies the event of the dead letter {@code dead} again (see {@link PageWriter#replay}), with the page loop
     * stopped within {@code timeout} meanwhile and started again after when it was running; a held or paused shard
     * stays so.
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
            pages.replay(dead);
        } finally {
            if (looping) {
                start();
            }
        }
    }

    /**
     * With the loop stopped: the next start replays from zero until the page that reaches {@code target} commits,
     * with listeners and side effects suppressed only up to {@code previouslyCommitted} (what the run before had
     * committed, so published): pages never cross it, and every event above it publishes as a live page does. The
     * page loop then ends the rebuild itself, so one whose caller stopped waiting (a timeout, a console) still goes
     * live when it catches up.
     */
    void rebuildTo(long target, long previouslyCommitted) {
        synchronized (lifecycle) {
            pages.rebuildTo(target, previouslyCommitted);
            lifecycle.fire(Event.REBUILD);
        }
    }

    /** With the loop stopped: the next start replays from zero with listeners suppressed. */
    void markRebuild() {
        synchronized (lifecycle) {
            pages.rebuilding();
            lifecycle.fire(Event.REBUILD);
        }
    }

    /** Whether a rebuild of this shard is still under way: its replay has not been swapped in. */
    boolean rebuilding() {
        return lifecycle.rebuilding();
    }

    /** Where the documents queries read stand: see {@link PageLoop#visibleFloor}. */
    long visibleFloor() {
        return pages.visibleFloor();
    }

    /** The replay behind the live tables a rebuild of this shard uses. */
    ShadowReplay shadow() {
        return pages.shadow();
    }
}
