package dev.ferret.runtime.projections;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.runtime.documents.DocumentChanges.Key;
import org.junit.jupiter.api.Test;

/** The store-wide snapshot cache: one bound in bytes for every shard, generations that empty a shard at once. */
class SnapshotCacheTest {

    private static Key key(int i) {
        return new Key(null, "t", "doc-" + i);
    }

    @Test
    void theBoundInBytesHoldsWhateverTheNumberOfShards() {
        int budget = 1 << 20;
        SnapshotCache cache = new SnapshotCache(budget);
        String json = "{\"n\":\"" + "x".repeat(500) + "\"}";
        // 2,000 shards of 100 documents each: about 23 MB unbounded
        for (int shard = 0; shard < 2_000; shard++) {
            long generation = cache.newGeneration();
            for (int i = 0; i < 100; i++) {
                cache.put(generation, key(i), json);
            }
        }
        assertThat(cache.weightedBytes()).isLessThanOrEqualTo(budget).isGreaterThan(budget / 2);
        long perEntry = SnapshotCache.weight("doc-10", json);
        assertThat(cache.entries()).isLessThanOrEqualTo(budget / perEntry);
    }

    @Test
    void aShardsGenerationsAreSeparateAndAbsenceIsKnownApartFromUnknown() {
        SnapshotCache cache = new SnapshotCache(1 << 20);
        long first = cache.newGeneration();
        long second = cache.newGeneration();
        cache.put(first, key(1), "{\"a\":1}");
        cache.put(first, key(2), null);
        assertThat(cache.get(first, key(1))).isEqualTo("{\"a\":1}");
        assertThat(SnapshotCache.isAbsent(cache.get(first, key(2)))).as("known not to exist").isTrue();
        assertThat(cache.get(first, key(3))).as("not known").isNull();
        assertThat(cache.get(second, key(1))).as("another generation sees nothing of the first").isNull();
        cache.remove(first, key(1));
        assertThat(cache.get(first, key(1))).isNull();
    }

    @Test
    void aShardsViewStartsEmptyAfterEveryClearAndKeepsNothingWhenTheStoreKeepsNothing() {
        SnapshotCache cache = new SnapshotCache(1 << 20);
        ShardDocumentCache shard = new ShardDocumentCache(cache, 10);
        shard.keep(key(1), "{}");
        assertThat(shard.lookup(key(1))).isEqualTo("{}");
        shard.forgetAll();
        assertThat(shard.lookup(key(1))).isNull();
        assertThat(new SnapshotCache(0).enabled()).isFalse();
    }
}
