package dev.ferret.runtime.daemon;

import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.metrics.ShardLabel;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.daemon.ShardLifecycle.Event;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One page a turn for one shard: reserve room in the budget, load the page above the progression, apply and write
 * it in one transaction, settle a commit whose outcome is unknown, release the room. A turn reports what happened
 * as a lifecycle {@link Turn}; the agent applies it to its {@link ShardLifecycle}.
 *
 * <p>Its fields ({@link #floor}, the unresolved page, the warm-up bound) are written only by the one loop run in
 * flight (and by the agent's start or rebuild while none is) and published through volatiles for status and
 * waiters; where a (re)started loop begins is {@link ShardStart}'s answer, a rebuild's replay and swap are
 * {@link ShadowReplay}'s. A connection is held only while a page loads or writes, never while the shard waits.
 *
 * <p>A page whose commit fails may have committed anyway (the server committed, the reply was lost). Its outcome is
 * settled before anything else ({@link UnknownCommit}): committed, its post-commit work runs once and the shard moves
 * on; not committed, it is re-processed. Until the outcome is known no page is loaded.
 */
final class PageLoop {

    private static final Logger LOG = LoggerFactory.getLogger(PageLoop.class);

    /** What a turn reports: a lifecycle event and the failure behind it, or no event (the shard waits in line). */
    record Turn(Event event, Throwable cause) {
        static final Turn NONE = new Turn(null, null);
    }

    private final String name;
    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final ShardParts parts;
    private final StoreContext context;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    private final TimeSource time;
    private final ShardLifecycle lifecycle;
    private final BudgetLine line;
    private final ShardOutbox outbox;
    private final TransientRetry retry;
    private final PageReader reader;
    private final PageListeners listeners;
    private final PageWriter writer;
    private final CatchUpPageSize pageSize;
    private final PageWeight weight;
    private final PageWriter.InFlight inFlight = new InFlight();
    private final ShardLabel label;
    /** Its tenant's mark cell, or the detector's: read on every turn and every supervisor visit, with no lookup. */
    private final LongSupplier markCell;

    private volatile long floor = -1;
    /** Where {@link #floor} is published for the status summary too (see {@link #moveFloor}). */
    private final LongConsumer floorColumn;
    /** A page whose commit failed after its work returned, until its outcome is known. */
    private final UnknownCommit unknownCommit;
    /** While the shard's progression is below this, a gated version replays with side effects held back. */
    private volatile long warmUpUntil = -1;
    /** The store-wide sequence an operator sent to the dead letters if it fails in the next page; -1: none. */
    private volatile long skipOnce = -1;
    /** The replay behind the live tables a rebuild uses, and its bounds while one is under way. */
    private final ShadowReplay shadow;
    private final ShardStart starts;
    private final LostPages lostPages;
    /** The time source's reading at this node's last commit of the shard; 0 before the first since the start. */
    private volatile long lastCommitNanos;
    /** The connection of the page in flight, for cancelling it; null between pages. */
    private volatile Connection pageConnection;
    /** Set once the page in flight has committed, until the next page starts. */
    private volatile boolean pageCommitted;

    PageLoop(String name, ProjectionApplier applier, LogPartition partition, ShardParts parts,
             ShardLifecycle lifecycle, BudgetLine line, ShardOutbox outbox, LongConsumer floorColumn) {
        this.name = name;
        this.floorColumn = floorColumn;
        this.applier = applier;
        this.partition = partition;
        this.parts = parts;
        this.context = parts.context();
        this.dataSource = partition.database().dataSource();
        this.progression = parts.progression();
        this.time = parts.time();
        this.lifecycle = lifecycle;
        this.line = line;
        this.outbox = outbox;
        var settings = parts.settings();
        // a stopping shard never retries: the retry would redo, on a fresh connection, the page the drain cancelled
        this.retry = parts.retries().create(name, settings,
                e -> !lifecycle.stopping() && context.dialect().isTransientCause(e));
        this.reader = new PageReader(applier, partition, parts);
        this.listeners = new PageListeners(name, parts);
        this.writer = new PageWriter(name, applier, partition, parts, outbox, listeners);
        this.pageSize = new CatchUpPageSize(settings, parts.budget());
        this.weight = new PageWeight(parts.budget());
        this.markCell = parts.marks().cellOf(partition);
        this.shadow = new ShadowReplay(name, applier, partition, parts);
        this.unknownCommit = new UnknownCommit(name, dataSource, progression);
        // only where commits may be lost (a commit that waited for the flush is not), and never under HotCold, whose
        // lock session dies with the server, so the shard restarts from its row anyway
        this.lostPages = new LostPages(name, dataSource, progression,
                settings.isAsyncPageCommits() && settings.getMode() != DaemonMode.HOT_COLD,
                () -> shadow.replaying() ? shadow.row() : name,
                () -> !applier.startsFromPresent() && !shadow.replaying());
        this.starts = new ShardStart(name, applier, partition, parts, lifecycle, shadow, retry, markCell);
        this.label = ShardLabel.of(name, applier.name(), partition.database().name(), settings.isMetricsPerShard());
    }

    long floor() {
        return floor;
    }

    /** The loop's floor moves (only the run in flight, or a restart with none, moves it). */
    private void moveFloor(long to) {
        floor = to;
        floorColumn.accept(to);
    }

    /**
     * The progression queries can rely on: the floor, but while a rebuild replays behind the live tables, where the
     * live tables stand (the replay's pages are not visible until the swap).
     */
    long visibleFloor() {
        return shadow.visibleFloor(floor);
    }

    /** The replay a rebuild of this shard uses, to prepare its tables while the loop is stopped. */
    ShadowReplay shadow() {
        return shadow;
    }

    long lastCommitNanos() {
        return lastCommitNanos;
    }

    /** The mark this shard works towards: the store's, or its tenant's. */
    long mark() {
        return markCell.getAsLong();
    }

    /** What this shard's metrics are recorded under. */
    ShardLabel label() {
        return label;
    }

    /** Whether the page in flight has committed: only its after-commit listeners are left. */
    boolean pageCommitted() {
        return pageCommitted;
    }

    Connection pageConnection() {
        return pageConnection;
    }

    /** The shard (re)starts: the next turn re-reads the progression; someone else may have run it meanwhile. */
    void restarted() {
        writer.restarted();
        moveFloor(-1);
        lastCommitNanos = 0;
    }

    /** The event at {@code sequence} goes to the dead letters if it fails in the next page. */
    void skipOnce(long sequence) {
        skipOnce = sequence;
    }

    /**
     * The next start replays from zero until {@code target} commits, silent only below {@code previouslyCommitted}
     * (what the run before had committed, so published).
     */
    void rebuildTo(long target, long previouslyCommitted) {
        shadow.begin(target, previouslyCommitted);
        rebuilding();
    }

    /** A rebuild starts: a page whose commit is unknown is not read back; the replay redoes it. */
    void rebuilding() {
        unknownCommit.forget();
        // the row the daemon read at its start is gone: the replay starts from what the rebuild left
        parts.startRows().forget(name);
    }

    /** One turn: at most one page, then the outcome. Throws nothing: a failure is the turn's event. */
    Turn turn() {
        pageCommitted = false;
        try {
            unknownCommit.settle(this::committed);
            if (floor < 0) {
                ShardStart.Start start = starts.start();
                if (start == null) {
                    return Turn.NONE;
                }
                warmUpUntil = start.warmUpUntil();
                moveFloor(start.floor());
                pageSize.reset();
                if (shadow.replaying()) {
                    pageSize.replaying();
                }
            }
            if (lostPages.recheckDue() && !lifecycle.stopping()) {
                resumeBehind(retry.call(() -> lostPages.behind(floor)));
            }
            // a start past the target (a subscription from the present) swaps before any page
            swapIfReached();
            // one page a turn: the worker goes back to the line, so every shard with work gets its page in turn
            boolean inLine = !lifecycle.stopping() && floor < mark() && !retry.call(this::processPage);
            if (!inLine) {
                swapIfReached();
            }
            return inLine ? Turn.NONE : new Turn(Event.PAGE_COMMITTED, null);
        } catch (ProgressionConflictException e) {
            if (!lifecycle.stopping() && resumeBehind(lostPages.behind(floor, e))) {
                return new Turn(Event.TRANSIENT_FAILURE, e);
            }
            if (!lifecycle.stopping() && parts.settings().getMode() == DaemonMode.HOT_COLD) {
                // this node holds the lock, so the other runner is a node that lost it and has not noticed yet;
                // its monitor stops it: resume from the row it left
                LOG.warn("Shard {} found its progression moved by a node that lost the lock; resuming from the"
                        + " persisted progression", name);
                moveFloor(-1);
                return new Turn(Event.TRANSIENT_FAILURE, e);
            }
            return new Turn(Event.CONFLICT, e);
        } catch (ApplyFailedException e) {
            return new Turn(Event.APPLY_FAILED, e);
        } catch (Throwable e) {
            return new Turn(context.dialect().isTransientCause(e) ? Event.TRANSIENT_FAILURE : Event.APPLY_FAILED, e);
        }
    }

    /** Moves the floor back to {@code at} (its row, found behind it: {@link LostPages}), or not for -1; says which. */
    private boolean resumeBehind(long at) {
        if (at < 0) {
            return false;
        }
        moveFloor(at);
        pageSize.reset();
        writer.restarted();
        return true;
    }

    /** The shard's database was unreachable: the next turn checks the row for pages it lost (any thread). */
    void recheckProgression() {
        lostPages.recheck();
    }

    /** A replay at its target swaps in (see {@link ShadowReplay#swapIn}); the shard runs live from the same floor. */
    private void swapIfReached() throws Exception {
        if (lifecycle.stopping() || !shadow.reached(floor)) {
            return;
        }
        OffsetDateTime now = OffsetDateTime.now(context.clock()).truncatedTo(ChronoUnit.MILLIS);
        retry.call(() -> shadow.swapIn(dataSource, floor, now));
        writer.restarted();
        lifecycle.fire(Event.REBUILD_REACHED);
        parts.board().changed();
        shadow.emptyShadowsAfterSwap(dataSource);
    }

    /** One page; false when the shard joined the budget's line instead (the grant wakes it, holding no thread). */
    private boolean processPage() throws SQLException {
        unknownCommit.settle(this::committed);
        // read once: a rebuild may end while this page is in flight, and its listeners must stay silent
        boolean silent = shadow.silent(floor);
        boolean warmingUp = floor < warmUpUntil;
        ShadowReplay replay = shadow.replaying() ? shadow : null;
        pageCommitted = false;
        LoadBudget.Reservation room = line.take(pageSize.next(), weight.bytesFor(pageSize.next()));
        if (room == null) {
            return false;
        }
        int limit = weight.eventsWithin(limitWithin(pageSize.next(), room), room);
        PageOutcome outcome;
        LoadedPage page;
        boolean done = false;
        long startedNanos = time.nanoTime();
        try {
            long from = floor;
            // within the database's bound on concurrent loads, unless another shard's load of the same page serves
            page = reader.load(from, upperBound(from), limit, connection -> pageConnection = connection);
            parts.budget().trim(room, page.events().size(), weight.bytesFor(page.events().size()));
            // millisecond precision survives every engine's timestamp column, so the stamp reads back equal
            PageAttempt attempt = new PageAttempt(page.floor(), page.end(),
                    OffsetDateTime.now(context.clock()).truncatedTo(ChronoUnit.MILLIS), silent, warmingUp,
                    startedNanos, replay);
            try {
                long skipping = skipOnce;
                outcome = writer.write(page, attempt, inFlight, skipping);
            } catch (PageOutcome.CommitUnknown e) {
                // the server may have committed and only the reply was lost: never re-process before knowing
                LOG.warn("The commit of shard {}'s page ({}, {}] failed ({}); reading back whether it committed",
                        name, attempt.floor(), attempt.end(), e.getCause().toString());
                unknownCommit.park(e.outcome());
                unknownCommit.settle(this::committed);
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
        committed(outcome);
        if (replay != null && shadow.replaying()) {
            pageSize.replaying();
        } else {
            pageSize.committed(limit, page.rows());
        }
        return true;
    }

    /**
     * A page's upper bound: the mark, but a warm-up page never crosses the prior version's mark, nor a silent
     * rebuild page what the run before the rebuild had committed.
     */
    private long upperBound(long from) {
        long mark = shadow.upperBound(from, mark());
        return from < warmUpUntil ? Math.min(mark, warmUpUntil) : mark;
    }

    /** The most rows a page may read: the page size, within a bounded budget's grant. */
    private static int limitWithin(int size, LoadBudget.Reservation room) {
        return room.events() > 0 ? (int) Math.min(size, room.events()) : size;
    }

    /**
     * What follows a page's commit: subscription listeners, async listeners, the outbox's delivery, then the
     * progress.
     */
    private void committed(PageOutcome outcome) {
        PageAttempt attempt = outcome.attempt();
        pageCommitted = true;
        pageConnection = null;
        lastCommitNanos = time.nanoTime();
        writer.committed(outcome);
        PageBatch batch = outcome.batch();
        weight.committed(outcome.events().size(), batch == null ? null : batch.changes());
        if (batch != null) {
            listeners.postCommit(batch);
        }
        if (outcome.appendedEvents()) {
            // the raised events are new events for every shard: a loop lost to a suspended container comes back now
            parts.eventsRaised().run();
        }
        if (attempt.warmingUp() && attempt.end() >= warmUpUntil) {
            LOG.info("Shard {} warmed up to the prior version's mark {}; side effects fire from here", name,
                    warmUpUntil);
        }
        if (!attempt.silent()) {
            // before the progress is published, so a reader released by a non-stale wait sees the caches flushed
            listeners.afterCommit(outcome.changeSets());
        }
        // the page's messages are durable in the outbox since its commit; delivering them only needs a kick
        outbox.committed(outcome.outboxWritten());
        // after a restart the loop re-reads the progression; only a loop at the page's floor moves on from it
        if (floor == attempt.floor()) {
            moveFloor(attempt.end());
        }
        // the first page after a skip starts at the refused event, so it has dealt with it (a tenant's page counts
        // in the tenant's own numbers, the skip in the store's: they are not compared)
        skipOnce = -1;
        if (applier.version() > 1 && !shadow.replaying()) {
            parts.reads().pageCommitted(applier.name(), applier.version(),
                    partition.perTenant() ? partition.tenantId() : StoreOptions.DEFAULT_TENANT, floor);
        }
        // after the floor moved: a collection never sees the page's events counted ahead of the progression
        parts.metrics().pageCommitted(label, outcome.events(), Duration.ofNanos(lastCommitNanos - attempt.startedNanos()),
                attempt.stamp(), attempt.silent());
        if (outcome.deadLetters() > 0) {
            parts.metrics().deadLettered(label, outcome.deadLetters());
        }
        parts.board().changed();
    }

    /**
     * Applies the event of the dead letter {@code dead} again (see {@link PageWriter#replay}); called with the loop
     * stopped. Its after-commit work (listeners, outbox delivery, raised events) runs as a page's does.
     */
    void replay(DeadLetterEvent dead) throws SQLException {
        LoadedPage page = reader.loadEvent(dead.sequence());
        PageAttempt attempt = new PageAttempt(page.floor(), page.end(),
                OffsetDateTime.now(context.clock()).truncatedTo(ChronoUnit.MILLIS), false, false, time.nanoTime(),
                null);
        PageOutcome outcome = writer.replay(page, attempt, dead.id());
        LOG.info("Shard {} applied dead letter {} (sequence {}) again", name, dead.id(), dead.sequence());
        listeners.postCommit(outcome.batch());
        if (outcome.appendedEvents()) {
            parts.eventsRaised().run();
        }
        listeners.afterCommit(outcome.changeSets());
        outbox.committed(outcome.outboxWritten());
    }

    /** What the page writer tells this loop, and asks it, while the page's transaction runs. */
    private final class InFlight implements PageWriter.InFlight {

        @Override
        public void connected(Connection connection) {
            pageConnection = connection;
        }

        @Override
        public boolean stopping() {
            return lifecycle.stopping();
        }

        /** Whether the drain cancelled the run this thread is in. */
        @Override
        public boolean cancelledByDrain() {
            LoopRun current = lifecycle.run();
            return Thread.currentThread().isInterrupted() && lifecycle.stopping()
                    || current != null && current.cancelled;
        }
    }
}
