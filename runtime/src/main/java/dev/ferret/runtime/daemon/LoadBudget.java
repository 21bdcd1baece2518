package dev.ferret.runtime.daemon;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The shared budget of events a node's agents may have loaded but not yet committed. An agent reserves room for a
 * page before loading, trims the reservation to what the page held, and releases it when the page committed or
 * failed. While there is room and nobody waits, reservations go straight through; otherwise agents queue in one FIFO
 * line and are let in a page at a time, so none starves behind a bigger neighbour. A reservation is always granted
 * when nothing at all is in flight: a budget set too low makes a node slow, never stuck (a page bigger than the whole
 * budget counts as the whole budget). A second, optional dimension counts bytes: each page reserves what its shard
 * estimates its events will take once applied (their documents built and serialized, from the shard's last pages),
 * so a projection that fans one event out to thousands of documents is counted as such and let in alone when it
 * needs the whole budget. Under memory pressure, told by a {@link MemorySignal} (by default the JVM's
 * collection-usage notifications: used heap after GC past the threshold), nothing new is granted until the work in
 * flight has drained or the signal, re-asked only while pressure is on, says the heap has recovered.
 *
 * <p>A waiter holds no thread: {@link #tryReserve} puts it in line and the budget hands it its reservation when its
 * turn comes, on the thread that freed the room. One lock guards the counters and the line, and is never held while a
 * waiter is called; a capacity of 0 makes the budget inert (no lock, no allocation).
 * {@link #peakInFlight()}, {@link #grants()} and {@link Reservation#turnsWaited()} are kept under that same lock, for
 * status and for tests of the bound and of fairness.
 */
final class LoadBudget {

    /** Room granted to one page. */
    static final class Reservation {
        private long events;
        private long bytes;
        private final long turnsWaited;

        private Reservation(long events, long bytes, long turnsWaited) {
            this.events = events;
            this.bytes = bytes;
            this.turnsWaited = turnsWaited;
        }

        long events() {
            return events;
        }

        /** The bytes reserved; 0 when bytes are not counted. */
        long bytes() {
            return bytes;
        }

        /** Grants to others between joining the line and this grant: FIFO keeps it below the number of agents. */
        long turnsWaited() {
            return turnsWaited;
        }
    }

    /**
     * A place in the line. {@link #granted} is called once, outside the budget's lock, on whichever thread freed the
     * room (a release, a trim, a re-check); it must only hand the reservation over, never wait.
     */
    interface Waiter {
        void granted(Reservation reservation);
    }

    private static final class Place {
        final long wanted;
        final long wantedBytes;
        final long joinedAt;
        final Waiter waiter;

        Place(long wanted, long wantedBytes, long joinedAt, Waiter waiter) {
            this.wanted = wanted;
            this.wantedBytes = wantedBytes;
            this.joinedAt = joinedAt;
            this.waiter = waiter;
        }
    }

    private static final Reservation UNBOUNDED = new Reservation(0, 0, 0);
    private static final long RECHECK_MILLIS = 100;

    private final long capacity;
    /** The most bytes in flight at once; 0 when bytes are not counted. */
    private final long byteCapacity;
    private final MemorySignal memory;
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Place> line = new ArrayDeque<>();
    /** Pressure signals since the heap was last seen recovered; 0 when there is no pressure. */
    private final AtomicLong pressure = new AtomicLong();
    private long inFlight;
    private long bytesInFlight;
    private long peakInFlight;
    private long peakBytesInFlight;
    private long grants;
    private long mostTurnsWaited;

    /** The JVM's memory signal, when {@code memoryThreshold} is a fraction in (0, 1) and the budget is bounded. */
    LoadBudget(long capacity, double memoryThreshold) {
        this(capacity, 0, memoryThreshold);
    }

    /** Bounded in events, bytes, both or neither (0); the JVM's memory signal as above. */
    LoadBudget(long capacity, long byteCapacity, double memoryThreshold) {
        this(capacity, byteCapacity, (capacity > 0 || byteCapacity > 0) && memoryThreshold > 0
                && memoryThreshold < 1 ? MemorySignal.jvm(memoryThreshold) : MemorySignal.NONE);
    }

    LoadBudget(long capacity, MemorySignal memory) {
        this(capacity, 0, memory);
    }

    /** Listens to {@code memory} only when bounded; {@link #close()} closes it. */
    LoadBudget(long capacity, long byteCapacity, MemorySignal memory) {
        this.capacity = Math.max(0, capacity);
        this.byteCapacity = Math.max(0, byteCapacity);
        this.memory = memory;
        if (this.capacity > 0 || this.byteCapacity > 0) {
            memory.listen(pressure::incrementAndGet);
        }
    }

    /** Whether it bounds anything: events, bytes or both. */
    boolean isBounded() {
        return capacity > 0 || byteCapacity > 0;
    }

    /** Whether it counts bytes. */
    boolean countsBytes() {
        return byteCapacity > 0;
    }

    /** The most bytes in flight at once; 0 when bytes are not counted. */
    long byteCapacity() {
        return byteCapacity;
    }

    /** The most events in flight at once; 0 when events are not bounded. */
    long capacity() {
        return capacity;
    }

    /**
     * Room for {@code events} now, when nobody is in line and it fits; otherwise {@code waiter} joins the back of the
     * line and null is returned: the waiter is handed its reservation when its turn comes, and holds no thread
     * meanwhile. A waiter already in line keeps its place.
     */
    Reservation tryReserve(long events, Waiter waiter) {
        return tryReserve(events, 0, waiter);
    }

    /** As {@link #tryReserve(long, Waiter)}, with room for {@code bytes} too when bytes are counted. */
    Reservation tryReserve(long events, long bytes, Waiter waiter) {
        if (!isBounded()) {
            return UNBOUNDED;
        }
        long wanted = Math.max(0, capacity == 0 ? events : Math.min(events, capacity));
        long wantedBytes = byteCapacity == 0 ? 0 : Math.max(0, Math.min(bytes, byteCapacity));
        lock.lock();
        try {
            if (line.isEmpty() && admits(wanted, wantedBytes)) {
                return grant(wanted, wantedBytes, grants);
            }
            if (line.stream().noneMatch(place -> place.waiter == waiter)) {
                line.addLast(new Place(wanted, wantedBytes, grants, waiter));
            }
        } finally {
            lock.unlock();
        }
        // the line may have been empty with the room taken by a page that has just been released
        grantHeads();
        return null;
    }

    /**
     * Leaves the line (a shard that stops). Returns false when the waiter was not in line any more: its grant is then
     * on its way, or already handed over, and the waiter must release it.
     */
    boolean leave(Waiter waiter) {
        if (!isBounded()) {
            return true;
        }
        boolean left;
        lock.lock();
        try {
            left = line.removeIf(place -> place.waiter == waiter);
        } finally {
            lock.unlock();
        }
        // whoever is behind may fit now
        grantHeads();
        return left;
    }

    /**
     * Waits for room for {@code events}, in line; gives up and returns null when {@code cancelled} turns true
     * (checked at least every 100 ms). A waiter that gives up or is interrupted leaves the line as if it had never
     * joined.
     */
    Reservation reserve(long events, BooleanSupplier cancelled) throws InterruptedException {
        CompletableFuture<Reservation> turn = new CompletableFuture<>();
        Waiter waiter = turn::complete;
        Reservation now = tryReserve(events, waiter);
        if (now != null) {
            return now;
        }
        boolean done = false;
        try {
            while (true) {
                try {
                    Reservation granted = turn.get(RECHECK_MILLIS, TimeUnit.MILLISECONDS);
                    done = true;
                    return granted;
                } catch (TimeoutException e) {
                    if (cancelled.getAsBoolean()) {
                        return null;
                    }
                    // timed: the heap may recover with nobody to signal
                    recheck();
                } catch (ExecutionException e) {
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (!done && !leave(waiter)) {
                // granted while giving up: the room goes straight back
                release(turn.join());
            }
        }
    }

    /** Grants to the head of the line whatever fits; for the heap's recovery, which nobody signals. */
    void recheck() {
        grantHeads();
    }

    private boolean admits(long wanted, long wantedBytes) {
        if (inFlight == 0 && bytesInFlight == 0) {
            return true;
        }
        return (capacity == 0 || inFlight + wanted <= capacity)
                && (byteCapacity == 0 || bytesInFlight + wantedBytes <= byteCapacity) && !underPressure();
    }

    /** Asks the signal again only while pressure is on; a signal landing during the question keeps it on. */
    private boolean underPressure() {
        long seen = pressure.get();
        if (seen == 0) {
            return false;
        }
        return memory.stillAbove() || !pressure.compareAndSet(seen, 0);
    }

    private Reservation grant(long wanted, long wantedBytes, long joinedAt) {
        inFlight += wanted;
        bytesInFlight += wantedBytes;
        peakInFlight = Math.max(peakInFlight, inFlight);
        peakBytesInFlight = Math.max(peakBytesInFlight, bytesInFlight);
        long turns = grants++ - joinedAt;
        mostTurnsWaited = Math.max(mostTurnsWaited, turns);
        return new Reservation(wanted, wantedBytes, turns);
    }

    /** The most grants to others any reservation waited through since the start: the fairness figure. */
    long mostTurnsWaited() {
        lock.lock();
        try {
            return mostTurnsWaited;
        } finally {
            lock.unlock();
        }
    }

    /** Lets in, in order, every waiter at the head of the line that fits; hands the grants over outside the lock. */
    private void grantHeads() {
        List<Runnable> handOvers = new ArrayList<>();
        lock.lock();
        try {
            Place head;
            while ((head = line.peekFirst()) != null && admits(head.wanted, head.wantedBytes)) {
                line.removeFirst();
                Reservation reservation = grant(head.wanted, head.wantedBytes, head.joinedAt);
                Waiter waiter = head.waiter;
                handOvers.add(() -> waiter.granted(reservation));
            }
        } finally {
            lock.unlock();
        }
        handOvers.forEach(Runnable::run);
    }

    /** Gives back what the page did not need. */
    void trim(Reservation reservation, long actual) {
        trim(reservation, actual, reservation == null ? 0 : reservation.bytes);
    }

    /** Gives back what the page did not need: of its events, and of its bytes as now estimated. */
    void trim(Reservation reservation, long actual, long actualBytes) {
        if (reservation == null || reservation == UNBOUNDED) {
            return;
        }
        long kept = Math.max(0, actual);
        long keptBytes = Math.max(0, actualBytes);
        boolean freed = false;
        lock.lock();
        try {
            if (kept < reservation.events) {
                inFlight -= reservation.events - kept;
                reservation.events = kept;
                freed = true;
            }
            if (keptBytes < reservation.bytes) {
                bytesInFlight -= reservation.bytes - keptBytes;
                reservation.bytes = keptBytes;
                freed = true;
            }
        } finally {
            lock.unlock();
        }
        if (freed) {
            grantHeads();
        }
    }

    /** The page committed or failed: its room is free. Releasing twice frees it once. */
    void release(Reservation reservation) {
        if (reservation == null || reservation == UNBOUNDED) {
            return;
        }
        lock.lock();
        try {
            inFlight -= reservation.events;
            bytesInFlight -= reservation.bytes;
            reservation.events = 0;
            reservation.bytes = 0;
        } finally {
            lock.unlock();
        }
        grantHeads();
    }

    long inFlight() {
        lock.lock();
        try {
            return inFlight;
        } finally {
            lock.unlock();
        }
    }

    /** The most events ever in flight at once; never above the capacity. */
    long peakInFlight() {
        lock.lock();
        try {
            return peakInFlight;
        } finally {
            lock.unlock();
        }
    }

    /** The most bytes ever reserved at once; never above the byte capacity but for one page alone in flight. */
    long peakBytesInFlight() {
        lock.lock();
        try {
            return peakBytesInFlight;
        } finally {
            lock.unlock();
        }
    }

    /** Reservations granted so far (an unbounded budget counts none). */
    long grants() {
        lock.lock();
        try {
            return grants;
        } finally {
            lock.unlock();
        }
    }

    int waiting() {
        lock.lock();
        try {
            return line.size();
        } finally {
            lock.unlock();
        }
    }

    void close() {
        memory.close();
    }
}
