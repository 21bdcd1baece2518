package dev.ferret.runtime.daemon;

import dev.ferret.daemon.OutboxStatus;
import dev.ferret.projections.OutboxMessage;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.daemon.OutboxRows.Row;
import dev.ferret.runtime.projections.PageBatch.PublishedMessage;
import dev.ferret.runtime.retry.Backoff;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's side-effect outbox: its pages write their messages into the outbox table inside their own transaction
 * ({@link #write}); after the commit this dispatcher delivers them to the store's publisher in id order (the shard's
 * publish order), marks each delivered, and deletes delivered rows past the retention. Delivery is at least once:
 * a message whose node dies between the publisher's return and the mark, or whose mark fails, is delivered again
 * with the same id by whoever runs the shard next (the restarted node, or the HotCold node that takes it over, which
 * delivers what is waiting as it {@link #start starts} the shard). A planned stop {@link #drain drains} what its pages
 * committed within the drain bound; rows nobody runs the shard for any more (a retired version, a tenant not seen
 * since a restart) are {@link #sweep swept} by the store's {@link OrphanedOutboxes}. There is one instance per shard
 * name in a store ({@link Outboxes}), so the agent and the sweep never deliver the same rows side by side.
 *
 * <h2>Concurrency</h2>
 * The run state ({@link #owned}, {@link #sweeping}, {@link #running}, {@link #again}, {@link #waitingForRetry},
 * {@link #backoff}, {@link #settled}) belongs to this object's monitor. At most one delivery run is in flight, on a daemon worker, so a shard's messages
 * are published one at a time and in order; a kick while it runs asks it to look again instead of starting a second
 * one. A publisher that throws stops the run at that message; a timer on the daemon's scheduler runs it again after
 * a back-off that doubles up to the daemon's longest retry back-off. The shard's pages never wait for it: the page
 * loop only {@link #write writes} rows and {@link #kick kicks}. The status fields are volatile, written by the run.
 * The payloads of messages this node wrote are kept in {@link #fresh} until delivered, so they go out as published
 * instead of read back from JSON; rows another node (or an earlier run) wrote are read back from their JSON.
 */
final class ShardOutbox {

    private static final Logger LOG = LoggerFactory.getLogger(ShardOutbox.class);
    /** Rows read per statement; a run reads again until the shard's outbox is empty. */
    private static final int PAGE = 100;
    /** Delivered rows one clean-up statement deletes at most. */
    static final int DELETE_BATCH = OutboxRows.DELETE_BATCH;

    private final String shard;
    private final TenantDatabases.Database database;
    private final ShardParts parts;
    private final StoreContext context;
    private final OutboxRows rows;
    private final Map<UUID, Object> fresh = new ConcurrentHashMap<>();
    /** Used only by the one run in flight. */
    private final TimedDelivery delivery;

    // run state: guarded by this
    /** The shard's agent runs here. */
    private boolean owned;
    /** A sweep of rows no agent here delivers: ends with the first run that finds the outbox empty. */
    private boolean sweeping;
    private Runnable sweepEnded;
    /** Completed when a run ends with no run following it; replaced then. */
    private CompletableFuture<Void> settled = new CompletableFuture<>();
    private boolean running;
    private boolean again;
    private boolean waitingForRetry;
    /**
     * Nothing waits in the table for this shard: the last run delivered all and counted none left, or the start-time
     * read found none, and no page committed a message since. A drain then has nothing to wait for.
     */
    private boolean knownEmpty;
    private final Backoff.Attempts backoff;

    // status: written by the run in flight
    private volatile long undelivered;
    private volatile Instant oldestUndelivered;
    private volatile String lastError;
    /** The time source's reading at the first failure of the current streak; 0 while deliveries succeed. */
    private volatile long failingSinceNanos;

    ShardOutbox(String shard, TenantDatabases.Database database, ShardParts parts) {
        this.shard = shard;
        this.database = database;
        this.parts = parts;
        this.context = parts.context();
        this.rows = new OutboxRows(shard, context, parts.outboxSql());
        this.backoff = Backoff.of(parts.settings()).attempts();
        this.delivery = new TimedDelivery(context.sideEffectPublisher(), parts.executors().deliveries(),
                parts.settings().getOutboxDeliveryTimeout());
    }

    /**
     * Inserts the page's messages on its connection {@code c}, in its transaction, and returns each one's id with
     * the message, for {@link #committed} to keep once the transaction committed.
     */
    Map<UUID, Object> write(Connection c, List<PublishedMessage> messages, OffsetDateTime now) throws SQLException {
        if (messages.isEmpty()) {
            return Map.of();
        }
        return rows.insert(c, messages, now);
    }

    /** The page that wrote {@code written} committed: its messages go out. */
    void committed(Map<UUID, Object> written) {
        if (written.isEmpty()) {
            return;
        }
        synchronized (this) {
            knownEmpty = false;
        }
        fresh.putAll(written);
        kick();
    }

    /**
     * The shard starts on this node: what earlier owners left undelivered goes out first, unless the daemon's
     * start-time read found none for it (at tens of thousands of shards, a read each at start would cost seconds).
     */
    void start() {
        boolean mayHaveRows = parts.outboxes().mayHaveRows(shard);
        synchronized (this) {
            owned = true;
            backoff.reset();
            knownEmpty = !mayHaveRows && fresh.isEmpty();
        }
        if (mayHaveRows) {
            kick();
        }
    }

    /**
     * A planned stop: delivers what the shard's committed pages wrote until {@code deadlineNanos} (a time
     * source reading), then {@link #stop stops}. A publisher failing or
     * backing off is not waited for: its rows wait for the next owner or the sweep. Returns whether the outbox
     * settled in time.
     */
    boolean drain(long deadlineNanos) {
        boolean nothingToDeliver;
        synchronized (this) {
            nothingToDeliver = knownEmpty && !running;
        }
        if (nothingToDeliver) {
            // the page loop has ended, so no page adds a message now: no run, no read
            stop();
            return true;
        }
        CompletableFuture<Void> run = kickAndWatch();
        boolean settledInTime = true;
        if (run != null) {
            try {
                settledInTime = parts.time().awaitDone(run, deadlineNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                settledInTime = false;
            }
        }
        if (!settledInTime) {
            LOG.warn("The outbox of shard {} did not settle within the drain bound; the next owner or the store's"
                    + " sweep delivers the rest", shard);
        }
        stop();
        return settledInTime;
    }

    /**
     * Delivers what is waiting although no agent runs the shard here, once: {@code ended} runs when a run found the
     * outbox empty or the shard stopped. Returns false, and never calls {@code ended}, when the shard's agent runs
     * here or a sweep is in progress already.
     */
    boolean sweep(Runnable ended) {
        synchronized (this) {
            if (owned || sweeping) {
                return false;
            }
            sweeping = true;
            sweepEnded = ended;
            knownEmpty = false;
            backoff.reset();
        }
        kick();
        return true;
    }

    /** Whether a sweep is in progress. */
    synchronized boolean sweeping() {
        return sweeping;
    }

    /** The shard stopped here: the run in flight stops after its message, and another owner delivers the rest. */
    void stop() {
        Runnable ended;
        synchronized (this) {
            owned = false;
            ended = endSweep();
        }
        if (ended != null) {
            ended.run();
        }
        fresh.clear();
        // what is left is the next owner's to deliver and report
        undelivered = 0;
        oldestUndelivered = null;
        lastError = null;
        failingSinceNanos = 0;
    }

    OutboxStatus status() {
        long failing = failingSinceNanos;
        Instant oldest = oldestUndelivered;
        Duration threshold = parts.settings().getStalledShardThreshold();
        Duration age = oldest == null ? Duration.ZERO
                : Duration.between(oldest, context.clock().instant());
        age = age.isNegative() ? Duration.ZERO : age;
        // failing for long, or a backlog that does not drain: either leaves messages waiting past the threshold
        boolean stuck = failing != 0 && parts.time().nanoTime() - failing > threshold.toNanos()
                || undelivered > 0 && age.compareTo(threshold) > 0;
        return new OutboxStatus(undelivered, age, lastError, stuck);
    }

    /** Starts a delivery run unless one runs (it is asked to look again) or a back-off is pending. */
    void kick() {
        kickAndWatch();
    }

    /** {@link #kick}, returning what completes when the run it started or asked to look again settles; or null. */
    private CompletableFuture<Void> kickAndWatch() {
        CompletableFuture<Void> watched;
        synchronized (this) {
            // known empty: a kick (a stop's, say) would only read the table to find nothing
            if (!isActive() || waitingForRetry || knownEmpty) {
                return null;
            }
            watched = settled;
            if (running) {
                again = true;
                return watched;
            }
            running = true;
            again = false;
        }
        try {
            parts.workers().execute(this::run);
            return watched;
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                running = false;
                settle();
            }
            LOG.warn("The workers refused the outbox delivery of shard {}; the supervisor kicks it again", shard);
            return null;
        }
    }

    /** Under this monitor: no run follows the one that ended. */
    private void settle() {
        settled.complete(null);
        settled = new CompletableFuture<>();
    }

    /** Under this monitor: ends a sweep in progress, returning what to call outside the monitor. */
    private Runnable endSweep() {
        if (!sweeping) {
            return null;
        }
        sweeping = false;
        Runnable ended = sweepEnded;
        sweepEnded = null;
        return ended;
    }

    /** The supervisor's check: messages left behind by a refused run go out. */
    void heal() {
        if (undelivered > 0 || !fresh.isEmpty()) {
            kick();
        }
    }

    private void run() {
        boolean failed = false;
        try {
            failed = !deliverAll();
        } catch (SQLException | RuntimeException e) {
            failed(e.toString());
            failed = true;
            LOG.warn("Delivering the outbox of shard {} failed ({}); retrying after a back-off", shard, e.toString());
        }
        boolean rerun;
        Duration delay = null;
        Runnable sweepDone = null;
        synchronized (this) {
            running = false;
            rerun = isActive() && !failed && again;
            if (failed && isActive()) {
                waitingForRetry = true;
                delay = backoff.next();
            } else if (!failed) {
                backoff.reset();
            }
            if (!rerun) {
                if (!failed) {
                    sweepDone = endSweep();
                    knownEmpty = undelivered == 0 && fresh.isEmpty();
                }
                settle();
            }
        }
        if (sweepDone != null) {
            sweepDone.run();
        }
        if (delay != null) {
            try {
                parts.scheduler().schedule(this::retryDue, delay.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // not run here: a refused timer would turn into a tight loop; the supervisor's heal kicks it instead
                synchronized (this) {
                    waitingForRetry = false;
                }
                LOG.warn("The scheduler refused the outbox retry of shard {}; the supervisor kicks it again", shard);
            }
        } else if (rerun) {
            kick();
        }
    }

    private void retryDue() {
        synchronized (this) {
            waitingForRetry = false;
        }
        kick();
    }

    /** Delivers until the shard's outbox is empty; false when the publisher failed (the rest wait for the retry). */
    private boolean deliverAll() throws SQLException {
        try (Connection c = database.dataSource().getConnection()) {
            while (true) {
                synchronized (this) {
                    again = false;
                }
                List<Row> page = rows.undelivered(c, PAGE);
                for (Row row : page) {
                    if (!isActive()) {
                        return true;
                    }
                    if (!deliver(c, row)) {
                        return false;
                    }
                }
                if (page.size() < PAGE) {
                    counted(c);
                    cleanUp(c);
                    return true;
                }
            }
        }
    }

    private synchronized boolean isActive() {
        return owned || sweeping;
    }

    private boolean deliver(Connection c, Row row) throws SQLException {
        try {
            Object payload = fresh.get(row.messageId());
            if (payload == null) {
                payload = context.serializer().fromJson(row.payload(), typeNamed(row.type()));
            }
            delivery.publish(new OutboxMessage(row.messageId().toString(), shard, row.sequence(),
                    row.tenantId(), payload));
        } catch (Exception e) {
            String why = e.toString();
            rows.recordFailure(c, row, why);
            failed(why);
            counted(c);
            LOG.warn("The side-effect publisher failed on message {} of shard {} (sequence {}); it and the shard's"
                    + " later messages are retried after a back-off", row.messageId(), shard, row.sequence(), e);
            return false;
        }
        rows.markDelivered(c, row);
        fresh.remove(row.messageId());
        failingSinceNanos = 0;
        lastError = null;
        return true;
    }

    private void failed(String why) {
        lastError = why;
        if (failingSinceNanos == 0) {
            failingSinceNanos = parts.time().nanoTime();
        }
    }

    private void counted(Connection c) throws SQLException {
        OutboxRows.Count count = rows.count(c);
        undelivered = count.undelivered();
        oldestUndelivered = count.oldest();
    }

    /** Deletes the database's rows delivered longer ago than the retention, at most once per tenth of it. */
    private void cleanUp(Connection c) throws SQLException {
        Duration retention = parts.settings().getOutboxRetention();
        if (!parts.limits().outboxCleanupDue(database, retention.dividedBy(10))) {
            return;
        }
        OffsetDateTime cutOff = OffsetDateTime.now(context.clock()).minus(retention);
        long total = rows.deleteDelivered(c, cutOff, this::isActive);
        if (total > 0) {
            LOG.debug("Deleted {} delivered outbox rows older than {}", total, retention);
        }
    }

    private static Class<?> typeNamed(String name) throws ClassNotFoundException {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try {
            return Class.forName(name, false, loader != null ? loader : ShardOutbox.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return Class.forName(name, false, ShardOutbox.class.getClassLoader());
        }
    }
}
