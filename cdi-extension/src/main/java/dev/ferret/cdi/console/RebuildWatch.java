package dev.ferret.cdi.console;

import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rebuilds started from the console and how far each is, read from the shards' statuses: a rebuild runs in the
 * daemon after the request that started it returned. Keeps the last {@link #KEPT}. Owned by one console; every
 * method is synchronized.
 */
final class RebuildWatch {

    static final int KEPT = 20;

    /**
     * @param label    the projection, with the tenant when one was named
     * @param targets  each shard's progression when the rebuild is done
     */
    private record Started(String label, Map<String, Long> targets, long startedNanos, String startedBy) {
    }

    /**
     * @param state       {@code running}, {@code paused} (a shard paused on an error) or {@code done}
     * @param secondsLeft at the rate so far; -1 when unknown
     */
    record Progress(String label, String startedBy, String state, long done, long total, double perSecond,
                    long secondsLeft) {
    }

    private final Deque<Started> started = new ArrayDeque<>();

    /** A rebuild of {@code shards} started at {@code nanos}, to the high water marks they report. */
    synchronized void started(String label, List<ShardStatus> shards, long nanos, String by) {
        Map<String, Long> targets = new HashMap<>();
        shards.forEach(s -> targets.put(s.name(), s.highWaterMark()));
        started.addFirst(new Started(label, targets, nanos, by));
        while (started.size() > KEPT) {
            started.removeLast();
        }
    }

    /** Every watched rebuild's progress, newest first, given the shards' statuses now. */
    synchronized List<Progress> progress(Map<String, ShardStatus> shards, long nanos) {
        List<Progress> all = new ArrayList<>();
        for (Started rebuild : started) {
            long done = 0;
            long total = 0;
            boolean running = false;
            boolean paused = false;
            for (Map.Entry<String, Long> target : rebuild.targets().entrySet()) {
                ShardStatus shard = shards.get(target.getKey());
                total += target.getValue();
                if (shard == null) {
                    continue;
                }
                done += Math.min(target.getValue(), shard.progression());
                running |= shard.state() == ShardState.REBUILDING;
                paused |= shard.state() == ShardState.PAUSED;
            }
            double seconds = Math.max(1e-3, (nanos - rebuild.startedNanos()) / 1e9);
            double rate = done / seconds;
            String state = paused ? "paused" : running || done < total ? "running" : "done";
            long left = state.equals("done") ? 0 : rate > 0 ? Math.round((total - done) / rate) : -1;
            all.add(new Progress(rebuild.label(), rebuild.startedBy(), state, done, total, rate, left));
        }
        return all;
    }
}
