package dev.ferret.runtime.projections;

import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The snapshots a shard wrote in its last pages, so that its next page need not read them back: a snapshot
 * projection's shard is the only writer of its documents while it holds the shard, so what it committed is what the
 * table holds. Kept as the JSON that was written, never as the page's instances: listeners, side effects and the next
 * page get instances of their own, and a cache hit reads exactly what a read-back would. At most {@code capacity}
 * documents, least recently used first out; 0 keeps nothing.
 *
 * <p>Valid only across pages that committed one after the other: a page starts with {@link #beginPage} at its
 * floor, and only {@link #pageCommitted} at that page's end keeps the cache for the next. A page that failed, was
 * rolled back, cancelled or retried, a floor that is not where the last committed page ended (a rebuild, another
 * node having run the shard), a (re)start of the shard ({@link #restarted}), and a document read for an event that
 * threw ({@link #forget}) empty it or drop the entry.
 *
 * <p>Owned by the shard's page loop: one page at a time, each run handed to the next through the executor, so it
 * needs no lock. The one exception is {@link #restarted}, a flag any thread may raise, read at the next page.
 */
public final class ShardDocumentCache {

    private final int capacity;
    private final Map<Key, String> documents;
    /** The end of the last page that committed with this cache; -1 when none did. */
    private long validAt = -1;
    /** Whether a page began and has not committed yet. */
    private boolean inPage;
    /** Raised by a (re)start of the shard, on the thread that starts it: the next page starts empty. */
    private volatile boolean restarted;

    public ShardDocumentCache(int capacity) {
        this.capacity = capacity;
        this.documents = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, String> eldest) {
                return size() > ShardDocumentCache.this.capacity;
            }
        };
    }

    /** A page starts at {@code floor}: what the cache holds stays only if the last page committed right there. */
    public void beginPage(long floor) {
        if (restarted) {
            restarted = false;
            validAt = -1;
        }
        if (inPage || floor != validAt) {
            documents.clear();
        }
        inPage = true;
    }

    /** The page that began last committed at {@code end} with these writes: they are the table's state now. */
    public void pageCommitted(long end, DocumentChanges changes) {
        if (!inPage) {
            documents.clear();
            validAt = -1;
            return;
        }
        if (capacity > 0) {
            changes.forEachWritten(documents::put);
        }
        validAt = end;
        inPage = false;
    }

    /**
     * The shard was started or restarted (any thread): someone else may have run it, or rebuilt it up to the very
     * floor the cache knows, since its last page.
     */
    public void restarted() {
        restarted = true;
    }

    /** Whether {@code key}'s committed state is known: its JSON, or null when it does not exist. */
    boolean knows(Key key) {
        return documents.containsKey(key);
    }

    /** The committed JSON of {@code key}, or null when it does not exist; check {@link #knows} first. */
    String json(Key key) {
        return documents.get(key);
    }

    /** The instance may have been changed in place by an event that threw: it must be read again. */
    void forget(Key key) {
        documents.remove(key);
    }

    /** Every instance may have been changed in place (the page is applied again from its start). */
    void forgetAll() {
        documents.clear();
    }

    int size() {
        return documents.size();
    }
}
