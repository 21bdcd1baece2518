package dev.ferret.runtime.projections;

import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentChanges.Key;

/**
 * The snapshots a shard wrote in its last pages, so that its next page need not read them back: a snapshot
 * projection's shard is the only writer of its documents while it holds the shard, so what it committed is what the
 * table holds. Kept as the JSON that was written, never as the page's instances: listeners, side effects and the next
 * page get instances of their own, and a cache hit reads exactly what a read-back would. Its entries live in the
 * store's {@link SnapshotCache}, bounded in bytes for every shard together, which may drop any of them at any time
 * (a miss reads the document back); at most {@code capacity} of them are this shard's, the newest kept.
 *
 * <p>Valid only across pages that committed one after the other: a page starts with {@link #beginPage} at its
 * floor, and only {@link #pageCommitted} at that page's end keeps the cache for the next. A page that failed, was
 * rolled back, cancelled or retried, a floor that is not where the last committed page ended (a rebuild, another
 * node having run the shard), a (re)start of the shard ({@link #restarted}), and a document read for an event that
 * threw ({@link #forget}) empty it or drop the entry. Emptying moves the shard to a new generation of the store's
 * cache: the old entries are never read again and leave it as it needs room.
 *
 * <p>Owned by the shard's page loop: one page at a time, each run handed to the next through the executor, so it
 * needs no lock (the store's cache is thread-safe). The one exception is {@link #restarted}, a flag any thread may
 * raise, read at the next page.
 */
public final class ShardDocumentCache {

    private final SnapshotCache store;
    private final int capacity;
    private long generation;
    /** Entries this shard put in its current generation (some may have been evicted since): the capacity's count. */
    private int kept;
    /** The end of the last page that committed with this cache; -1 when none did. */
    private long validAt = -1;
    /** Whether a page began and has not committed yet. */
    private boolean inPage;
    /** Raised by a (re)start of the shard, on the thread that starts it: the next page starts empty. */
    private volatile boolean restarted;

    public ShardDocumentCache(SnapshotCache store, int capacity) {
        this.store = store;
        this.capacity = capacity;
        this.generation = store.newGeneration();
    }

    private void clear() {
        generation = store.newGeneration();
        kept = 0;
    }

    /** A page starts at {@code floor}: what the cache holds stays only if the last page committed right there. */
    public void beginPage(long floor) {
        if (restarted) {
            restarted = false;
            validAt = -1;
        }
        if (inPage || floor != validAt) {
            clear();
        }
        inPage = true;
    }

    /** The page that began last committed at {@code end} with these writes: they are the table's state now. */
    public void pageCommitted(long end, DocumentChanges changes) {
        if (!inPage) {
            clear();
            validAt = -1;
            return;
        }
        if (capacity > 0 && store.enabled()) {
            int written = changes.writtenCount();
            if (kept + Math.min(written, capacity) > capacity) {
                clear();
            }
            // the newest writes are the likeliest to be read next; past the capacity the older ones are skipped
            int[] skip = {Math.max(0, written - capacity)};
            changes.forEachWritten((key, json) -> {
                if (skip[0] > 0) {
                    skip[0]--;
                } else {
                    keep(key, json);
                }
            });
        }
        validAt = end;
        inPage = false;
    }

    /** Keeps {@code json} (null: the document does not exist) as {@code key}'s committed state. */
    void keep(Key key, String json) {
        store.put(generation, key, json);
        kept++;
    }

    /**
     * The shard was started or restarted (any thread): someone else may have run it, or rebuilt it up to the very
     * floor the cache knows, since its last page.
     */
    public void restarted() {
        restarted = true;
    }

    /**
     * {@code key}'s committed JSON; {@link #isAbsent} when it is known not to exist; null when not known (read it
     * back).
     */
    String lookup(Key key) {
        return store.get(generation, key);
    }

    /** Whether a {@link #lookup} found the document known not to exist. */
    static boolean isAbsent(String cached) {
        return SnapshotCache.isAbsent(cached);
    }

    /** The instance may have been changed in place by an event that threw: it must be read again. */
    void forget(Key key) {
        store.remove(generation, key);
    }

    /** Every instance may have been changed in place (the page is applied again from its start). */
    void forgetAll() {
        clear();
    }
}
