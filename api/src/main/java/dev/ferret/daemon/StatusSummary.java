package dev.ferret.daemon;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The daemon's shards counted, for a first look at many of them: how many are in each state, and per projection the
 * same counts and its worst lag (the shard furthest behind the mark). One pass over the shards.
 *
 * @param shards      how many shards there are
 * @param byState     how many are in each state (states with none are left out)
 * @param projections one line per projection, in the order its first shard appears
 */
public record StatusSummary(int shards, Map<ShardState, Integer> byState, List<ProjectionSummary> projections) {

    public StatusSummary {
        byState = copy(byState);
        projections = List.copyOf(projections);
    }

    /**
     * One projection's shards (one, or one per tenant).
     *
     * @param worstLag   the largest lag among them
     * @param worstShard the shard with that lag (the first such); null when there is none
     */
    public record ProjectionSummary(String projection, int shards, Map<ShardState, Integer> byState, long worstLag,
                                    String worstShard) {

        public ProjectionSummary {
            byState = copy(byState);
        }
    }

    /** Counts {@code shards}. */
    public static StatusSummary of(List<ShardStatus> shards) {
        Map<ShardState, Integer> byState = new EnumMap<>(ShardState.class);
        Map<String, Tally> byProjection = new LinkedHashMap<>();
        for (ShardStatus shard : shards) {
            byState.merge(shard.state(), 1, Integer::sum);
            byProjection.computeIfAbsent(shard.projection(), p -> new Tally()).add(shard);
        }
        List<ProjectionSummary> projections = new ArrayList<>(byProjection.size());
        byProjection.forEach((projection, tally) -> projections.add(new ProjectionSummary(projection, tally.shards,
                tally.byState, tally.worstLag, tally.worstShard)));
        return new StatusSummary(shards.size(), byState, projections);
    }

    /** An unmodifiable copy in the states' order. */
    private static Map<ShardState, Integer> copy(Map<ShardState, Integer> counts) {
        Map<ShardState, Integer> ordered = new EnumMap<>(ShardState.class);
        ordered.putAll(counts);
        return Collections.unmodifiableMap(ordered);
    }

    /** One projection's counts while they are made. */
    private static final class Tally {
        private final Map<ShardState, Integer> byState = new EnumMap<>(ShardState.class);
        private int shards;
        private long worstLag = -1;
        private String worstShard;

        void add(ShardStatus shard) {
            shards++;
            byState.merge(shard.state(), 1, Integer::sum);
            if (shard.lag() > worstLag) {
                worstLag = shard.lag();
                worstShard = shard.name();
            }
        }
    }
}
