package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.UnknownEventTypeException;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one shard: loads pages above its progression up to the high water mark, applies them and commits each page's
 * documents with its progression in one transaction.
 *
 * <p>At most one run of the page loop is in flight ({@link #scheduled}); its fields are written only by that run
 * (and by {@link #start} / {@link #resetForRebuild} while no run is in flight) and published through volatiles
 * for status and waiters. A connection is held only while a page loads or writes, never while the shard waits.
 */
final class ShardAgent {

    private static final Logger LOG = LoggerFactory.getLogger(ShardAgent.class);

    private final String name;
    private final ProjectionApplier applier;
    private final AsyncDaemon daemon;
    private final LogPartition partition;
    private final javax.sql.DataSource dataSource;
    private final FerretDocumentStore store;
    private final DaemonSql sql;
    private final TransientRetry retry;

    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile Future<?> inFlight;
    private volatile boolean stopRequested = true;
    private volatile ShardState state = ShardState.STOPPED;
    private volatile long floor = -1;
    private volatile Throwable error;
    private volatile boolean rebuilding;
    private volatile Duration retryBackoff;
    /** The connection of the page in flight, for cancelling it; null between pages. */
    private volatile Connection pageConnection;
    /** Set once the page in flight has committed, until the next page starts. */
    private volatile boolean pageCommitted;

    ShardAgent(String name, ProjectionApplier applier, AsyncDaemon daemon, LogPartition partition) {
        this.name = name;
        this.applier = applier;
        this.daemon = daemon;
        this.partition = partition;
        this.dataSource = partition.database().dataSource();
        this.store = daemon.store();
        this.sql = store.dialect().daemonSql(store.names());
        var settings = daemon.settings();
        this.retry = daemon.retries().create(name, settings, this::isTransient);
        this.retryBackoff = settings.getTransientRetryBackoff();
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
        return daemon.markOf(partition);
    }

    long floor() {
        return floor;
    }

    ShardState state() {
        return state;
    }

    ShardStatus status() {
        return new ShardStatus(name, state, Math.max(0, floor), mark(), error);
    }

    /** Starts (or restarts) from the persisted progression. */
    void start() {
        error = null;
        floor = -1;
        state = rebuilding ? ShardState.REBUILDING : ShardState.RUNNING;
        stopRequested = false;
        daemon.board().changed();
        wake();
    }

    /** Called when the mark moves: runs the page loop unless it is running already. */
    void wake() {
        if (stopRequested || !(state == ShardState.RUNNING || state == ShardState.REBUILDING
                || state == ShardState.RETRYING)) {
            return;
        }
        if (scheduled.compareAndSet(false, true)) {
            try {
                inFlight = daemon.workers().submit(this::run);
            } catch (RuntimeException e) {
                scheduled.set(false);
                throw e;
            }
        }
    }

    /**
     * Asks the page loop to stop after the page in flight: pages behind it are not loaded (nothing marked them
     * complete, so the next owner resumes them from the progression row).
     */
    void requestStop() {
        stopRequested = true;
    }

    /**
     * The drain: waits until {@code deadlineNanos} (a {@link System#nanoTime()} value; {@code Long.MAX_VALUE} for no
     * bound) for the page in flight to finish and mark progression, then cancels it: its connection is aborted, so
     * the statement stops and the transaction rolls back, and it is re-processed on the next start. A page that
     * committed already keeps its after-commit listeners. Returns whether the loop ended in time.
     */
    boolean awaitStop(long deadlineNanos) {
        Future<?> running = inFlight;
        boolean ended = true;
        if (running != null && scheduled.get()) {
            try {
                if (deadlineNanos == Long.MAX_VALUE) {
                    running.get();
                } else {
                    running.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
            } catch (TimeoutException e) {
                ended = false;
                cancelPageInFlight(running);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ended = false;
                cancelPageInFlight(running);
            } catch (Exception e) {
                // the loop records its own failures
            }
        }
        if (state != ShardState.PAUSED) {
            state = ShardState.STOPPED;
        }
        daemon.board().changed();
        return ended;
    }

    /** {@link #requestStop()} then {@link #awaitStop(long)} bounded by {@code timeout} (non-positive: no bound). */
    boolean stop(Duration timeout) {
        requestStop();
        return awaitStop(deadlineAfter(timeout));
    }

    static long deadlineAfter(Duration timeout) {
        return timeout.isNegative() || timeout.isZero() ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    }

    private void cancelPageInFlight(Future<?> running) {
        if (pageCommitted) {
            // only the after-commit listeners are left; the stop must not cut them off
            LOG.warn("Shard {} is still running after-commit listeners of a committed page past the drain bound", name);
            return;
        }
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

    /** With the loop stopped: the next start replays from zero with listeners suppressed. */
    void resetForRebuild(boolean on) {
        rebuilding = on;
        if (!on && state == ShardState.REBUILDING) {
            state = ShardState.RUNNING;
        }
    }

    private void run() {
        try {
            if (floor < 0 && applier.startsFromPresent()) {
                if (!daemon.markKnown(partition)) {
                    // the mark of "present" is not read yet; try again after the detector's first read
                    daemon.scheduler().schedule(this::wake, daemon.settings().getPollingInterval().toMillis(),
                            TimeUnit.MILLISECONDS);
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
            }
            while (!stopRequested && floor < mark()) {
                retry.call(this::processPage);
            }
            if (state == ShardState.RETRYING) {
                state = rebuilding ? ShardState.REBUILDING : ShardState.RUNNING;
                error = null;
                retryBackoff = daemon.settings().getTransientRetryBackoff();
            }
        } catch (ProgressionConflictException e) {
            if (stopRequested) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else if (daemon.settings().getMode() == DaemonMode.HOT_COLD) {
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
            if (stopRequested) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else {
                pause(e);
            }
        } catch (Throwable e) {
            if (stopRequested) {
                LOG.debug("Shard {} stopped with a page in flight", name, e);
            } else if (isTransient(e)) {
                backOff(e);
            } else {
                pause(e);
            }
        } finally {
            scheduled.set(false);
            daemon.board().changed();
            if (!stopRequested && state != ShardState.RETRYING && floor >= 0 && floor < mark()) {
                wake();
            }
        }
    }

    private void pause(Throwable e) {
        error = e;
        state = ShardState.PAUSED;
        LOG.error("Shard {} paused at {}: {}", name, floor, e.toString(), e);
    }

    private void backOff(Throwable e) {
        error = e;
        state = ShardState.RETRYING;
        Duration delay = retryBackoff;
        retryBackoff = min(delay.multipliedBy(2), daemon.settings().getMaxRetryBackoff());
        LOG.warn("Shard {} backs off ({}); retrying in {}", name, e.toString(), delay);
        daemon.scheduler().schedule(this::wake, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private boolean isTransient(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sqlException && store.dialect().isTransient(sqlException)) {
                return true;
            }
        }
        return false;
    }

    /** Moves the progression row up to the current mark, ignoring history, and starts there. */
    private long startFromPresent() throws SQLException {
        long present = mark();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.raiseMark())) {
            ps.setString(1, name);
            ps.setLong(2, present);
            ps.setObject(3, OffsetDateTime.now(store.clock()));
            ps.executeUpdate();
        }
        LOG.info("Shard {} subscribes from the present: starting at {}", name, present);
        return readProgression();
    }

    private long readProgression() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    private Void processPage() throws SQLException {
        // read once: a rebuild may end while this page is in flight, and its listeners must stay silent
        boolean silent = rebuilding;
        boolean warmingUp = floor < warmUpUntil;
        pageCommitted = false;
        LoadBudget.Reservation room = reserveRoom();
        if (room == null) {
            return null; // stopping while waiting in line
        }
        List<ChangeSet> changeSets;
        LoadedPage page;
        try {
            // a warm-up page never crosses the prior version's mark: side effects start exactly after it
            long mark = mark();
            page = throttled(daemon.loadThrottle(partition.database()),
                    () -> load(floor, warmingUp ? Math.min(mark, warmUpUntil) : mark));
            daemon.budget().trim(room, page.events().size());
            writtenBatch = null;
            LoadedPage loaded = page;
            changeSets = throttled(daemon.writeThrottle(partition.database()), () -> write(loaded, silent));
        } finally {
            daemon.budget().release(room);
        }
        pageCommitted = true;
        pageConnection = null;
        PageBatch committed = writtenBatch;
        writtenBatch = null;
        if (committed != null) {
            runPostCommit(committed);
            if (!silent && !warmingUp) {
                deliverSideEffects(committed);
            }
        }
        if (warmingUp && page.end() >= warmUpUntil) {
            LOG.info("Shard {} warmed up to the prior version's mark {}; side effects fire from here", name,
                    warmUpUntil);
        }
        if (!silent) {
            // before the progress is published, so a reader released by a non-stale wait sees the caches flushed
            afterCommit(changeSets);
        }
        floor = page.end();
        daemon.board().changed();
        return null;
    }

    private LoadedPage load(long from, long to) throws SQLException {
        int batchSize = daemon.settings().getBatchSize();
        List<EventEnvelope> events = new ArrayList<>();
        List<DeadLetter> unreadable = new ArrayList<>();
        long lastRow = from;
        int rows = 0;
        // a tenant's page is read in its own sequence, which rides in a ninth column; the store's in seq_id
        int position = partition.perTenant() ? 9 : 1;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(partition.perTenant() ? sql.loadTenantPage() : sql.loadPage())) {
            pageConnection = c;
            int i = 1;
            if (partition.perTenant()) {
                ps.setString(i++, partition.tenantId());
            }
            ps.setLong(i++, from);
            ps.setLong(i++, to);
            ps.setInt(i, batchSize);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    lastRow = rs.getLong(position);
                    String alias = rs.getString(5);
                    if (!applier.wants(alias)) {
                        continue;
                    }
                    try {
                        events.add(store.readEvent(rs));
                    } catch (UnknownEventTypeException e) {
                        unreadable.add(new DeadLetter(lastRow, UUID.fromString(rs.getString(2)), alias,
                                rs.getString(8), e));
                    }
                }
            }
        } finally {
            // back in the pool it may be lent to someone else: a drain's abort must never reach it
            pageConnection = null;
        }
        // a short page read everything up to the mark: holes below it are permanent, so the shard reaches it
        long end = rows < batchSize ? to : lastRow;
        return new LoadedPage(from, end, events, unreadable);
    }

    /** The page just written; set inside its transaction, read after the commit. Loop-thread only. */
    private PageBatch writtenBatch;
    /** While the shard's progression is below this, a gated version replays with side effects held back. */
    private volatile long warmUpUntil = -1;

    private List<ChangeSet> write(LoadedPage page, boolean silent) throws SQLException {
        boolean skip = daemon.settings().isSkipApplyErrors();
        OffsetDateTime now = OffsetDateTime.now(store.clock());
        return store.transactions().inTransaction(dataSource, c -> {
            // built inside: a transaction runner that re-runs the work must not collect them twice
            List<DeadLetter> deadLetters = new ArrayList<>();
            for (DeadLetter unreadable : page.unreadable()) {
                if (!skip) {
                    throw new ApplyFailedException(name, unreadable.sequence(), unreadable.typeName(), "?",
                            unreadable.error());
                }
                deadLetters.add(unreadable);
            }
            pageConnection = c;
            if (stopRequested && Thread.currentThread().isInterrupted()) {
                throw new SQLException("shard " + name + " was cancelled before its page wrote");
            }
            PageBatch batch = new PageBatch(store, c, new DocumentChanges());
            try {
                applier.applyPage(page.floor(), page.end(), page.events(), batch, (event, e) -> {
                    if (!skip) {
                        throw new ApplyFailedException(name, event.sequence(), event.typeName(), event.streamId(), e);
                    }
                    LOG.warn("Shard {} sends {} at sequence {} to the dead letters: {}", name, event.typeName(),
                            event.sequence(), e.toString());
                    deadLetters.add(new DeadLetter(event.sequence(), event.eventId(), event.typeName(),
                            event.tenantId(), e));
                }, name, () -> stopRequested || Thread.currentThread().isInterrupted());
            } catch (PageBatch.PageReadException e) {
                throw e.getCause();
            } catch (SQLException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new dev.ferret.FerretException("shard " + name + " failed on the page (" + page.floor() + ", "
                        + page.end() + "]: " + e, e);
            }
            writtenBatch = batch;
            // only listeners read change sets; without any the page skips building them
            List<ChangeSet> changeSets = daemon.listeners().isEmpty() ? List.of() : batch.changeSets(name);
            if (!silent) {
                for (AsyncListener listener : daemon.listeners()) {
                    for (ChangeSet changes : changeSets) {
                        listener.beforeCommit(batch.operations(changes.tenantId()), changes);
                    }
                }
            }
            batch.changes().write(c, store.serializer(), now);
            writeDeadLetters(c, deadLetters, now);
            if (!store.dialect().advanceProgression(c, sql, name, page.floor(), page.end(), now)) {
                throw new ProgressionConflictException(name, page.floor());
            }
            return changeSets;
        });
    }

    private void writeDeadLetters(Connection c, List<DeadLetter> deadLetters, OffsetDateTime now)
            throws SQLException {
        if (deadLetters.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(sql.insertDeadLetter())) {
            for (DeadLetter dead : deadLetters) {
                Throwable cause = dead.error() instanceof ApplyFailedException && dead.error().getCause() != null
                        ? dead.error().getCause() : dead.error();
                ps.setString(1, name);
                ps.setLong(2, dead.sequence());
                store.dialect().bindUuid(ps, 3, dead.eventId());
                ps.setString(4, dead.typeName());
                ps.setString(5, dead.tenantId());
                ps.setString(6, cause.getClass().getName());
                ps.setString(7, String.valueOf(cause.getMessage()));
                ps.setObject(8, now);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Waits in the budget's line; the shard stays RUNNING while it waits. */
    private LoadBudget.Reservation reserveRoom() throws SQLException {
        try {
            return daemon.budget().reserve(daemon.settings().getBatchSize(), () -> stopRequested);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.sql.SQLTransientException("interrupted waiting for the load budget", e);
        }
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T run() throws SQLException;
    }

    private static <T> T throttled(java.util.concurrent.Semaphore throttle, SqlWork<T> work) throws SQLException {
        if (throttle == null) {
            return work.run();
        }
        try {
            throttle.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.sql.SQLTransientException("interrupted waiting for a database slot", e);
        }
        try {
            return work.run();
        } finally {
            throttle.release();
        }
    }

    /** Subscription listeners: once per committed page, never inside the retry of a failed one. */
    private void runPostCommit(PageBatch committed) {
        for (dev.ferret.subscriptions.PostCommitListener listener : committed.postCommitListeners()) {
            try {
                listener.afterCommit();
            } catch (Exception e) {
                LOG.error("Post-commit listener of shard {} failed; the page stays committed", name, e);
            }
        }
    }

    /** Projection side effects of a committed page: messages to the publisher, events in units of their own. */
    private void deliverSideEffects(PageBatch committed) {
        for (Object message : committed.publishedMessages()) {
            try {
                store.sideEffectPublisher().accept(message);
            } catch (RuntimeException e) {
                LOG.error("Publishing a side effect of shard {} failed; the page stays committed", name, e);
            }
        }
        for (PageBatch.RaisedEvent raised : committed.raisedEvents()) {
            try (var session = store.openSession(raised.tenantId())) {
                session.events().append(raised.streamId(), raised.event());
                session.saveChanges();
            } catch (RuntimeException e) {
                LOG.error("Appending an event raised by shard {} failed; the page stays committed", name, e);
            }
        }
    }

    /** The highest progression any prior version of this projection persisted. */
    private long priorVersionsMark() throws SQLException {
        long highest = 0;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(sql.selectProgression())) {
            for (int version = 1; version < applier.version(); version++) {
                ps.setString(1, partition.shardName(AsyncDaemon.shardName(applier.name(), version)));
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        highest = Math.max(highest, rs.getLong(1));
                    }
                }
            }
        }
        return highest;
    }

    private void afterCommit(List<ChangeSet> changeSets) {
        List<AsyncListener> listeners = daemon.listeners();
        if (listeners.isEmpty()) {
            return;
        }
        for (ChangeSet changes : changeSets) {
            try (var session = store.querySession(changes.tenantId())) {
                for (AsyncListener listener : listeners) {
                    try {
                        listener.afterCommit(session, changes);
                    } catch (RuntimeException e) {
                        // the batch is durable; reprocessing it would fire the side effect again
                        LOG.error("After-commit listener {} failed for shard {}; the batch stays committed",
                                listener.getClass().getName(), name, e);
                    }
                }
            }
        }
    }

}
