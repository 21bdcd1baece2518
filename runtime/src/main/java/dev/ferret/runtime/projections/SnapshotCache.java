package dev.ferret.runtime.projections;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The snapshots every snapshot shard of one store keeps between its pages, in one cache bounded in bytes for the
 * whole store, so that the memory it takes does not grow with the number of shards (tenants): the least useful
 * entries, of whichever shard, leave first. Each shard sees its own part through a {@link ShardDocumentCache}, which
 * decides when its entries are valid. Entries are weighed by the UTF-16 size of their JSON and id plus a fixed
 * overhead; eviction runs on the thread that adds, so the bound holds when {@link #put} returns.
 *
 * <p>Thread-safe: shards of the store use it at once from their own loops.
 */
public final class SnapshotCache {

    /** Roughly what an entry costs besides its strings: the cache's node, the key records, the map slot. */
    static final int ENTRY_OVERHEAD = 160;

    /** Marks a document known not to exist (the cache takes no null values). */
    private static final String ABSENT = new String("absent");

    /** A shard's entries of one generation; a shard drops all of them at once by moving to a new generation. */
    private record Entry(long generation, Key key) {
    }

    private final Cache<Entry, String> documents;
    private final long maxBytes;
    private final AtomicLong generations = new AtomicLong();

    /** A cache of at most {@code maxBytes}; 0 keeps nothing. */
    public SnapshotCache(long maxBytes) {
        this.maxBytes = maxBytes;
        this.documents = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Entry entry, String json) -> weight(entry.key().id(), json))
                .executor(Runnable::run)
                .build();
    }

    static int weight(String id, String json) {
        long bytes = 2L * (id.length() + (json == ABSENT ? 0 : json.length())) + ENTRY_OVERHEAD;
        return (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    /** Whether it keeps anything. */
    public boolean enabled() {
        return maxBytes > 0;
    }

    /** A generation no shard has used: a shard's fresh, empty part. */
    long newGeneration() {
        return generations.incrementAndGet();
    }

    /** The committed JSON of {@code key} in {@code generation}; null for unknown, {@link #isAbsent} for none. */
    String get(long generation, Key key) {
        return documents.getIfPresent(new Entry(generation, key));
    }

    /** Keeps {@code json} (null: the document does not exist) for {@code key} in {@code generation}. */
    void put(long generation, Key key, String json) {
        documents.put(new Entry(generation, key), json == null ? ABSENT : json);
    }

    void remove(long generation, Key key) {
        documents.invalidate(new Entry(generation, key));
    }

    static boolean isAbsent(String cached) {
        return cached == ABSENT;
    }

    /** What the entries weigh now, in bytes (an estimate, as the bound is). */
    public long weightedBytes() {
        documents.cleanUp();
        return documents.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    }

    /** How many entries it holds now, of every shard and generation. */
    public long entries() {
        documents.cleanUp();
        return documents.estimatedSize();
    }
}
