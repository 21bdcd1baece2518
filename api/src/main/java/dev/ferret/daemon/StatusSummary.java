package dev.ferret.daemon;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The daemon's shards counted, for a first look at many of them: how many are in each state, and per projection the
 * same counts and its worst lag (the shard furthest behind the mark). One pass over the shards.
 *
 * @param shards      how many shards there are
 * @param byState     how many are in each state (states with none are left out)
 * @param projections one line per projection, ordered by name
 * @param databases   one line per database whose event log shards read, ordered by name
 */
public record StatusSummary(int shards, Map<ShardState, Integer> byState, List<ProjectionSummary> projections,
                            List<DatabaseSummary> databases) {

    public StatusSummary {
        byState = copy(byState);
        projections = List.copyOf(projections);
        databases = List.copyOf(databases);
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

    /**
     * One database's shards: those reading its event log, whatever their projection.
     *
     * @param worstLag   the largest lag among them
     * @param worstShard the shard with that lag (the first such); null when there is none
     */
    public record DatabaseSummary(String database, int shards, Map<ShardState, Integer> byState, long worstLag,
                                  String worstShard) {

        public DatabaseSummary {
            byState = copy(byState);
        }
    }

    /** Counts {@code shards}. */
    public static StatusSummary of(Iterable<ShardStatus> shards) {
        Counter counter = new Counter();
        shards.forEach(counter::add);
        return counter.summary();
    }

    /**
     * Counts shards one at a time, for a caller that does not keep them: {@link #add} each, then {@link #summary}.
     */
    public static final class Counter {
        private static final ShardState[] STATES = ShardState.values();
        private final Tally all = new Tally();
        private final Map<String, Tally> byProjection = new HashMap<>();
        private final Map<String, Tally> byDatabase = new HashMap<>();

        public void add(ShardStatus shard) {
            add(shard.name(), shard.projection(), shard.database(), shard.state(), shard.lag());
        }

        /** Counts one shard from the few facts a summary needs, where building its whole status would cost more. */
        public void add(String name, String projection, String database, ShardState state, long lag) {
            all.add(name, state, lag);
            byProjection.computeIfAbsent(projection, p -> new Tally()).add(name, state, lag);
            byDatabase.computeIfAbsent(database, d -> new Tally()).add(name, state, lag);
        }

        public StatusSummary summary() {
            List<ProjectionSummary> projections = new ArrayList<>(byProjection.size());
            new TreeMap<>(byProjection).forEach((projection, tally) -> projections.add(new ProjectionSummary(
                    projection, tally.shards, tally.states(), tally.worstLag, tally.worstShard)));
            List<DatabaseSummary> databases = new ArrayList<>(byDatabase.size());
            new TreeMap<>(byDatabase).forEach((database, tally) -> databases.add(new DatabaseSummary(database,
                    tally.shards, tally.states(), tally.worstLag, tally.worstShard)));
            return new StatusSummary(all.shards, all.states(), projections, databases);
        }
    }

    /** An unmodifiable copy in the states' order. */
    private static Map<ShardState, Integer> copy(Map<ShardState, Integer> counts) {
        Map<ShardState, Integer> ordered = new EnumMap<>(ShardState.class);
        ordered.putAll(counts);
        return Collections.unmodifiableMap(ordered);
    }

    /** One group's counts while they are made. */
    private static final class Tally {
        private final int[] byState = new int[Counter.STATES.length];
        private int shards;
        private long worstLag = -1;
        private String worstShard;

        void add(String name, ShardState state, long lag) {
            shards++;
            byState[state.ordinal()]++;
            if (lag > worstLag) {
                worstLag = lag;
                worstShard = name;
            }
        }

        Map<ShardState, Integer> states() {
            Map<ShardState, Integer> counts = new EnumMap<>(ShardState.class);
            for (int i = 0; i < byState.length; i++) {
                if (byState[i] > 0) {
                    counts.put(Counter.STATES[i], byState[i]);
                }
            }
            return counts;
        }
    }
}
