package dev.ferret.cdi.console;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Each shard's rate over the last minute, from the progressions the console samples as it is viewed (nothing runs
 * while nobody looks). One sample a second at most, so a shard keeps at most {@link #WINDOW_SECONDS} + 1. Owned by
 * one console; every method is synchronized.
 */
final class ShardRates {

    static final int WINDOW_SECONDS = 60;
    private static final long SECOND = 1_000_000_000L;

    private record Sample(long nanos, long progression) {
    }

    /**
     * @param perSecond sequence positions a second over the window; 0 until two samples exist
     * @param history   the rate between consecutive samples, oldest first, for a sparkline
     */
    record Rate(double perSecond, List<Double> history) {
    }

    private final Map<String, Deque<Sample>> samples = new HashMap<>();

    /** Records {@code progression} of {@code shard} at {@code nanos} and returns its rate. */
    synchronized Rate sample(String shard, long progression, long nanos) {
        Deque<Sample> window = samples.computeIfAbsent(shard, s -> new ArrayDeque<>());
        if (!window.isEmpty() && progression < window.peekLast().progression()) {
            // a rebuild started over: the old samples would show a negative rate
            window.clear();
        }
        if (window.isEmpty() || nanos - window.peekLast().nanos() >= SECOND) {
            window.addLast(new Sample(nanos, progression));
        }
        while (window.size() > 1 && nanos - window.peekFirst().nanos() > WINDOW_SECONDS * SECOND) {
            window.removeFirst();
        }
        if (window.size() < 2) {
            return new Rate(0, List.of());
        }
        List<Double> history = new ArrayList<>(window.size() - 1);
        Sample previous = null;
        for (Sample sample : window) {
            if (previous != null) {
                history.add(perSecond(previous, sample));
            }
            previous = sample;
        }
        return new Rate(perSecond(window.peekFirst(), window.peekLast()), history);
    }

    /** Forgets shards no longer reported. */
    synchronized void retain(Set<String> shards) {
        samples.keySet().retainAll(shards);
    }

    private static double perSecond(Sample from, Sample to) {
        long nanos = to.nanos() - from.nanos();
        return nanos <= 0 ? 0 : (to.progression() - from.progression()) * (double) SECOND / nanos;
    }
}
