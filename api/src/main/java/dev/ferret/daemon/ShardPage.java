package dev.ferret.daemon;

import java.util.ArrayList;
import java.util.List;

/**
 * One page of the shards a {@link ShardQuery} matched, with the count and the summary of all it matched.
 *
 * @param shards  the page, ordered by name
 * @param matched how many shards matched, on every page
 * @param query   the query that made it
 * @param summary every matching shard counted (not only the page's)
 */
public record ShardPage(List<ShardStatus> shards, int matched, ShardQuery query, StatusSummary summary) {

    public ShardPage {
        shards = List.copyOf(shards);
    }

    /** The page {@code query} asks of {@code byName}, shards already ordered by name. */
    public static ShardPage of(Iterable<ShardStatus> byName, ShardQuery query) {
        StatusSummary.Counter counter = new StatusSummary.Counter();
        List<ShardStatus> page = new ArrayList<>();
        int matched = 0;
        for (ShardStatus shard : byName) {
            if (query.matches(shard)) {
                if (matched >= query.offset() && page.size() < query.limit()) {
                    page.add(shard);
                }
                matched++;
                counter.add(shard);
            }
        }
        return new ShardPage(page, matched, query, counter.summary());
    }

    /** Whether matching shards follow this page. */
    public boolean hasMore() {
        return query.offset() + shards.size() < matched;
    }
}
