package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TransactionRunner;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Pages of several shards of one database committed in one transaction. A shard whose page is applied and holds
 * only writes of its own (its documents, dead letters and progression; no side effects) joins its database's queue;
 * the first to find no group running leads one: it takes every page queued, writes each on one connection and
 * commits once, then hands over to the next in the queue. A page whose write fails, a progression that moved, a
 * cancelled page or a transaction that cannot begin rolls the group back and every member writes alone, so one
 * shard's failure is never another's. A commit that fails leaves every member's outcome unknown; each reads its own
 * progression back, as a page of its own would.
 *
 * <p>Each database's queue, its members' verdicts and whether a group is running are guarded by that database's
 * lock; a member's write runs on the leader's thread while the member's own thread waits, so its state has one
 * user at a time. Thread-safe.
 */
final class SharedWrites {

    /** What became of a page that joined a group. */
    enum Verdict {
        /** Its writes committed with the group. */
        COMMITTED,
        /** The group did not take it or rolled back: it writes in a transaction of its own. */
        ALONE,
        /** The group's commit failed after its writes: whether they committed is read back. */
        UNKNOWN,
        /** The drain cancelled it: not written. */
        CANCELLED
    }

    /** One page's part of a group: its writes, on the group's connection, and whether a drain cancelled it. */
    interface Member {
        void write(Connection connection) throws SQLException;

        boolean cancelled();
    }

    /** A verdict and, for {@link Verdict#UNKNOWN} and {@link Verdict#CANCELLED}, why. */
    record Outcome(Verdict verdict, Throwable cause) {
    }

    /** How long a queued page waits for a group to take it before it writes alone. */
    static final Duration LONGEST_QUEUE_WAIT = Duration.ofSeconds(30);
    /** How long a page a group took waits for the group's end before its outcome counts as unknown. */
    static final Duration LONGEST_GROUP_WAIT = Duration.ofMinutes(5);

    private final TransactionRunner transactions;
    /** The database's bound on concurrent page writes: a group holds one slot, its queued members none. */
    private final DatabaseLimits limits;
    private final boolean enabled;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();
    private final AtomicLong groups = new AtomicLong();
    private final AtomicLong grouped = new AtomicLong();

    private SharedWrites(TransactionRunner transactions, DatabaseLimits limits, boolean enabled) {
        this.transactions = transactions;
        this.limits = limits;
        this.enabled = enabled;
    }

    /**
     * On when allowed and a database may hold more than one shard: tenants partition the log, or several projections
     * read it.
     */
    static SharedWrites of(TransactionRunner transactions, DatabaseLimits limits, boolean allowed,
                           boolean partitionedByTenant, int projections) {
        return new SharedWrites(transactions, limits, allowed && (partitionedByTenant || projections > 1));
    }

    boolean enabled() {
        return enabled;
    }

    /** Groups committed since the start. */
    long groups() {
        return groups.get();
    }

    /** Pages of the database named {@code database} waiting for a group to take them. */
    int queued(String database) {
        Queue queue = queues.get(database);
        if (queue == null) {
            return 0;
        }
        queue.lock.lock();
        try {
            return queue.waiting.size();
        } finally {
            queue.lock.unlock();
        }
    }

    /** Pages committed in groups since the start. */
    long grouped() {
        return grouped.get();
    }

    /**
     * Writes {@code member} with the pages of {@code database} that are queued with it, and returns what became of
     * it. Throws only when interrupted while queued (a drain cancelled the run), carrying the interrupt on.
     */
    Outcome write(TenantDatabases.Database database, Member member) throws SQLException {
        return queues.computeIfAbsent(database.name(), name -> new Queue()).write(database, member);
    }

    private final class Queue {

        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final ArrayDeque<Entry> waiting = new ArrayDeque<>();
        private boolean leading;

        Outcome write(TenantDatabases.Database database, Member member) throws SQLException {
            Entry mine = new Entry(member);
            List<Entry> group;
            lock.lock();
            try {
                waiting.add(mine);
                long queueDeadline = System.nanoTime() + LONGEST_QUEUE_WAIT.toNanos();
                long groupDeadline = Long.MAX_VALUE;
                boolean interrupted = false;
                while (mine.outcome == null && leading) {
                    long now = System.nanoTime();
                    if (mine.taken && groupDeadline == Long.MAX_VALUE) {
                        groupDeadline = now + LONGEST_GROUP_WAIT.toNanos();
                    }
                    long left = (mine.taken ? groupDeadline : queueDeadline) - now;
                    if (left <= 0) {
                        if (!mine.taken) {
                            waiting.remove(mine);
                            return new Outcome(Verdict.ALONE, null);
                        }
                        return new Outcome(Verdict.UNKNOWN, new SQLException("the group that took the page did not"
                                + " end within " + LONGEST_GROUP_WAIT));
                    }
                    try {
                        changed.awaitNanos(left);
                    } catch (InterruptedException e) {
                        if (!mine.taken) {
                            waiting.remove(mine);
                            Thread.currentThread().interrupt();
                            throw new SQLException("cancelled while its page waited for a shared transaction", e);
                        }
                        // taken: the group checks the cancel before it commits; its outcome is still to come
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                if (mine.outcome != null) {
                    return mine.outcome;
                }
                leading = true;
                group = new ArrayList<>(waiting);
                waiting.clear();
                group.forEach(entry -> entry.taken = true);
            } finally {
                lock.unlock();
            }
            List<Outcome> outcomes = List.of();
            try {
                outcomes = run(database, group);
            } finally {
                lock.lock();
                try {
                    for (int i = 0; i < group.size(); i++) {
                        group.get(i).outcome = i < outcomes.size() ? outcomes.get(i)
                                : new Outcome(Verdict.ALONE, null);
                    }
                    leading = false;
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
            return mine.outcome;
        }
    }

    /** Writes {@code group} in one transaction; one outcome per entry, in order. Throws nothing it could catch. */
    private List<Outcome> run(TenantDatabases.Database database, List<Entry> group) {
        List<Outcome> outcomes = new ArrayList<>(group.size());
        List<Member> live = new ArrayList<>(group.size());
        for (Entry entry : group) {
            boolean cancelled = entry.member.cancelled();
            outcomes.add(cancelled ? new Outcome(Verdict.CANCELLED, new SQLException("cancelled before its shared"
                    + " transaction began")) : null);
            if (!cancelled) {
                live.add(entry.member);
            }
        }
        if (live.isEmpty()) {
            return outcomes;
        }
        boolean[] reached = new boolean[1];
        Verdict verdict;
        Throwable cause = null;
        try {
            limits.writing(database, () -> transactions.inTransaction(database.dataSource(), c -> {
                for (Member member : live) {
                    member.write(c);
                }
                for (Member member : live) {
                    if (member.cancelled()) {
                        throw new SQLException("a page of the group was cancelled at the drain bound");
                    }
                }
                reached[0] = true;
                return null;
            }));
            verdict = Verdict.COMMITTED;
            groups.incrementAndGet();
            grouped.addAndGet(live.size());
        } catch (SQLException | RuntimeException e) {
            verdict = reached[0] ? Verdict.UNKNOWN : Verdict.ALONE;
            cause = e;
        }
        Outcome shared = new Outcome(verdict, cause);
        outcomes.replaceAll(o -> o == null ? shared : o);
        return outcomes;
    }

    /** A page in a queue; its fields are guarded by the queue's lock. */
    private static final class Entry {
        final Member member;
        boolean taken;
        Outcome outcome;

        Entry(Member member) {
            this.member = member;
        }
    }
}
