package dev.ferret.runtime.dialect.h2;

import dev.ferret.runtime.dialect.SequencesPassedException;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The owners of one embedded H2 store's sequence numbers in flight, kept in this JVM: H2 has no transaction-scoped
 * user locks. It plays the part of the database owner locks of the other engines: an append registers the numbers
 * its inserts drew and withdraws them once its transaction has ended; the detector passes a hole only when none of
 * its numbers is registered, and from then on a registration of a number at or below what it passed is refused.
 * Both steps run under this object's monitor, so for any one number exactly one of them comes first, which is the
 * whole argument (docs/guide/daemon.md, "Holes and their owners").
 *
 * <p>Every field is guarded by the monitor; any thread calls any method. Only appends and a detector in this JVM
 * see it, which is what embedded H2 allows (one process opens the database). With H2 in server mode and writers in
 * other JVMs their numbers are not here: such holes look ownerless.
 */
final class H2SequenceOwners {

    private static final ConcurrentMap<String, H2SequenceOwners> STORES = new ConcurrentHashMap<>();

    /** Number to how many registrations hold it (one, but a retried registration must not drop another's). */
    private final NavigableMap<Long, Integer> inFlight = new TreeMap<>();
    private long passedThrough;

    static H2SequenceOwners of(String storeKey) {
        return STORES.computeIfAbsent(storeKey, k -> new H2SequenceOwners());
    }

    /** Registers {@code sequences}, or refuses them all when the detector already passed the lowest. */
    synchronized Runnable own(long[] sequences) throws SequencesPassedException {
        long lowest = Long.MAX_VALUE;
        for (long sequence : sequences) {
            lowest = Math.min(lowest, sequence);
        }
        if (sequences.length > 0 && lowest <= passedThrough) {
            throw new SequencesPassedException(lowest, passedThrough);
        }
        for (long sequence : sequences) {
            inFlight.merge(sequence, 1, Integer::sum);
        }
        return () -> release(sequences);
    }

    private synchronized void release(long[] sequences) {
        for (long sequence : sequences) {
            inFlight.computeIfPresent(sequence, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /** True, and from now on numbers up to {@code to} are refused, when none from {@code from} to {@code to} is owned. */
    synchronized boolean tryPass(long from, long to) {
        Map<Long, Integer> owned = inFlight.subMap(from, true, to, true);
        if (!owned.isEmpty()) {
            return false;
        }
        passedThrough = Math.max(passedThrough, to);
        return true;
    }
}
