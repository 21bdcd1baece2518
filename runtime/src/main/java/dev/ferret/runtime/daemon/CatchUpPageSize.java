package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;

/**
 * How many events a shard's next page may hold. A page that came back full says the shard is far behind its mark,
 * where bigger pages pay off most: fewer progression writes and, on interleaved streams, fewer re-writes of the same
 * documents. Each full page doubles the next, up to {@code batchSize × maxBatchGrowth}, never past 100,000 events
 * and never past a quarter of a bounded load budget (so four shards still fit in it side by side). A page that was
 * not full (the shard caught up) or did not commit goes back to {@code batchSize}: latency near the mark, and a retry
 * after a failure, stay those of the configured page. A rebuild's replay, which no query reads until its swap, has no
 * latency to keep: its pages have {@code batchSize × rebuildBatchGrowth} events from the first (within the same
 * bounds), so each document is rewritten by fewer pages.
 *
 * <p>Owned by one shard's page loop: only the loop run in flight reads or changes it, and runs of one shard never
 * overlap, so it needs no lock.
 */
final class CatchUpPageSize {

    static final int MOST_EVENTS = 100_000;

    private final int base;
    private final int most;
    private final int replayPage;
    private int next;

    CatchUpPageSize(DaemonSettings settings, LoadBudget budget) {
        this.base = settings.getBatchSize();
        long grown = (long) base * settings.getMaxBatchGrowth();
        long cap = Math.min(grown, MOST_EVENTS);
        if (budget.capacity() > 0) {
            cap = Math.min(cap, budget.capacity() / 4);
        }
        this.most = (int) Math.max(base, cap);
        long replay = Math.min((long) base * settings.getRebuildBatchGrowth(), MOST_EVENTS);
        if (budget.capacity() > 0) {
            replay = Math.min(replay, budget.capacity() / 4);
        }
        this.replayPage = (int) Math.max(base, replay);
        this.next = base;
    }

    /** The most events the next page may hold. */
    int next() {
        return next;
    }

    /** A page of {@code limit} events committed holding {@code rows} rows of the log. */
    void committed(int limit, int rows) {
        next = rows >= limit ? afterFull() : base;
    }

    /** A replay's page committed, or its loop (re)starts: its pages keep their size. */
    void replaying() {
        next = replayPage;
    }

    /** What {@link #next()} becomes once a full page commits: the size of a page read ahead of it. */
    int afterFull() {
        return (int) Math.min((long) next * 2, most);
    }

    /** The page did not commit, or the shard (re)starts: the next page has the configured size again. */
    void reset() {
        next = base;
    }

    int most() {
        return most;
    }
}
