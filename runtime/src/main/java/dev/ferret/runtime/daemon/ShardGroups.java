package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.StatusSummary;
import dev.ferret.daemon.StatusSummary.DatabaseSummary;
import dev.ferret.daemon.StatusSummary.ProjectionSummary;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * The daemon's shards grouped by projection and database, each group numbered once, so that the status summary
 * counts tens of thousands of shards with array increments and no lookup per shard, then folds the few groups
 * (projections x databases) into its lines. Groups are added by agents as they are built, from any thread, and never
 * removed; a concurrent map and a copy-on-write list of them.
 */
final class ShardGroups {

    /** One projection's shards of one database. */
    record Group(int id, String projection, String database) {
    }

    private static final ShardState[] STATES = ShardState.values();

    private final ConcurrentMap<List<String>, Group> byKey = new ConcurrentHashMap<>();
    private final List<Group> all = new CopyOnWriteArrayList<>();
    /** Every agent's row, which the summary counts. */
    private final ShardColumns columns = new ShardColumns();

    /** The row an agent named {@code name} of {@code group}, working towards {@code mark}, writes for the summary. */
    ShardColumns.Slot slot(Group group, String name, LongSupplier mark) {
        return columns.add(group.id(), name, mark);
    }

    /** The group of {@code projection}'s shards in {@code database}, numbered on first use. */
    Group of(String projection, String database) {
        return byKey.computeIfAbsent(List.of(projection, database), key -> {
            synchronized (all) {
                Group group = new Group(all.size(), projection, database);
                all.add(group);
                return group;
            }
        });
    }

    /** Counts every registered shard: by state, per projection and per database, with the worst lags. */
    StatusSummary summary() {
        List<Group> groups = List.copyOf(all);
        int[] counts = new int[groups.size() * STATES.length];
        int[] shards = new int[groups.size()];
        long[] worstLag = new long[groups.size()];
        String[] worstShard = new String[groups.size()];
        Arrays.fill(worstLag, -1);
        columns.forEachRegistered((g, state, lag, names, slot) -> {
            if (g >= groups.size()) {
                return; // a group made after the copy: its shards were registered after the pass began
            }
            counts[g * STATES.length + state]++;
            shards[g]++;
            if (lag > worstLag[g]) {
                worstLag[g] = lag;
                worstShard[g] = names.of(slot);
            }
        });
        Map<String, Line> projections = new TreeMap<>();
        Map<String, Line> databases = new TreeMap<>();
        Line total = new Line();
        for (Group group : groups) {
            int g = group.id();
            for (Line line : List.of(total, projections.computeIfAbsent(group.projection(), p -> new Line()),
                    databases.computeIfAbsent(group.database(), d -> new Line()))) {
                line.add(counts, g, shards[g], worstLag[g], worstShard[g]);
            }
        }
        projections.values().removeIf(line -> line.shards == 0);
        databases.values().removeIf(line -> line.shards == 0);
        List<ProjectionSummary> byProjection = new ArrayList<>();
        projections.forEach((name, line) -> byProjection.add(new ProjectionSummary(name, line.shards, line.states(),
                line.worstLag, line.worstShard)));
        List<DatabaseSummary> byDatabase = new ArrayList<>();
        databases.forEach((name, line) -> byDatabase.add(new DatabaseSummary(name, line.shards, line.states(),
                line.worstLag, line.worstShard)));
        return new StatusSummary(total.shards, total.states(), byProjection, byDatabase);
    }

    /** One line of the summary while the groups are folded into it. */
    private static final class Line {
        private final int[] byState = new int[STATES.length];
        private int shards;
        private long worstLag = -1;
        private String worstShard;

        void add(int[] counts, int group, int groupShards, long groupWorstLag, String groupWorstShard) {
            for (int s = 0; s < STATES.length; s++) {
                byState[s] += counts[group * STATES.length + s];
            }
            shards += groupShards;
            if (groupWorstLag > worstLag) {
                worstLag = groupWorstLag;
                worstShard = groupWorstShard;
            }
        }

        Map<ShardState, Integer> states() {
            Map<ShardState, Integer> states = new EnumMap<>(ShardState.class);
            for (int s = 0; s < STATES.length; s++) {
                if (byState[s] > 0) {
                    states.put(STATES[s], byState[s]);
                }
            }
            return states;
        }
    }
}
