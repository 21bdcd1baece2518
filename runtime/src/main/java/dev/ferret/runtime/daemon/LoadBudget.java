package dev.ferret.runtime.daemon;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The shared budget of events a node's agents may have loaded but not yet committed. An agent reserves room for a
 * page before loading, trims the reservation to what the page held, and releases it when the page committed or
 * failed. While there is room and nobody waits, reservations go straight through; otherwise agents queue in one FIFO
 * line and are let in a page at a time, so none starves behind a bigger neighbour. A reservation is always granted
 * when nothing at all is in flight: a budget set too low makes a node slow, never stuck (a page bigger than the whole
 * budget counts as the whole budget). Under memory pressure, told by a {@link MemorySignal} (by default the JVM's
 * collection-usage notifications: used heap after GC past the threshold), nothing new is granted until the work in
 * flight has drained or the signal, re-asked only while pressure is on, says the heap has recovered.
 *
 * <p>One lock guards the counters and the line; a capacity of 0 makes the budget inert (no lock, no allocation).
 * {@link #peakInFlight()}, {@link #grants()} and {@link Reservation#turnsWaited()} are kept under that same lock, for
 * status and for tests of the bound and of fairness.
 */
final class LoadBudget {

    /** Room granted to one page. */
    static final class Reservation {
        private long events;
        private final long turnsWaited;

        private Reservation(long events, long turnsWaited) {
            this.events = events;
            this.turnsWaited = turnsWaited;
        }

        long events() {
            return events;
        }

        /** Grants to others between joining the line and this grant: FIFO keeps it below the number of agents. */
        long turnsWaited() {
            return turnsWaited;
        }
    }

    private static final Reservation UNBOUNDED = new Reservation(0, 0);
    private static final long RECHECK_MILLIS = 100;

    private final long capacity;
    private final MemorySignal memory;
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Condition> line = new ArrayDeque<>();
    /** Pressure signals since the heap was last seen recovered; 0 when there is no pressure. */
    private final AtomicLong pressure = new AtomicLong();
    private long inFlight;
    private long peakInFlight;
    private long grants;

    /** The JVM's memory signal, when {@code memoryThreshold} is a fraction in (0, 1) and the budget is bounded. */
    LoadBudget(long capacity, double memoryThreshold) {
        this(capacity, capacity > 0 && memoryThreshold > 0 && memoryThreshold < 1
                ? MemorySignal.jvm(memoryThreshold) : MemorySignal.NONE);
    }

    /** Listens to {@code memory} only when bounded; {@link #close()} closes it. */
    LoadBudget(long capacity, MemorySignal memory) {
        this.capacity = Math.max(0, capacity);
        this.memory = memory;
        if (this.capacity > 0) {
            memory.listen(pressure::incrementAndGet);
        }
    }

    boolean isBounded() {
        return capacity > 0;
    }

    /**
     * Waits for room for {@code events}, in line; gives up and returns null when {@code cancelled} turns true
     * (checked at least every 100 ms). A waiter that gives up or is interrupted leaves the line as if it had never
     * joined.
     */
    Reservation reserve(long events, BooleanSupplier cancelled) throws InterruptedException {
        if (capacity == 0) {
            return UNBOUNDED;
        }
        long wanted = Math.max(0, Math.min(events, capacity));
        lock.lock();
        try {
            if (line.isEmpty() && admits(wanted)) {
                return grant(wanted, grants);
            }
            return waitInLine(wanted, cancelled);
        } finally {
            lock.unlock();
        }
    }

    private Reservation waitInLine(long wanted, BooleanSupplier cancelled) throws InterruptedException {
        Condition turn = lock.newCondition();
        long joinedAt = grants;
        line.addLast(turn);
        try {
            while (line.peekFirst() != turn || !admits(wanted)) {
                if (cancelled.getAsBoolean()) {
                    return null;
                }
                // timed: the heap may recover, or the shard stop, with nobody to signal
                turn.await(RECHECK_MILLIS, TimeUnit.MILLISECONDS);
            }
            return grant(wanted, joinedAt);
        } finally {
            // granted, gave up or interrupted: whoever is next may fit in what is left
            line.remove(turn);
            signalHead();
        }
    }

    private boolean admits(long wanted) {
        return inFlight == 0 || inFlight + wanted <= capacity && !underPressure();
    }

    /** Asks the signal again only while pressure is on; a signal landing during the question keeps it on. */
    private boolean underPressure() {
        long seen = pressure.get();
        if (seen == 0) {
            return false;
        }
        return memory.stillAbove() || !pressure.compareAndSet(seen, 0);
    }

    private Reservation grant(long wanted, long joinedAt) {
        inFlight += wanted;
        peakInFlight = Math.max(peakInFlight, inFlight);
        return new Reservation(wanted, grants++ - joinedAt);
    }

    /** Gives back what the page did not need. */
    void trim(Reservation reservation, long actual) {
        if (reservation == null || reservation == UNBOUNDED) {
            return;
        }
        long kept = Math.max(0, actual);
        lock.lock();
        try {
            if (kept < reservation.events) {
                inFlight -= reservation.events - kept;
                reservation.events = kept;
                signalHead();
            }
        } finally {
            lock.unlock();
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
            reservation.events = 0;
            signalHead();
        } finally {
            lock.unlock();
        }
    }

    private void signalHead() {
        Condition head = line.peekFirst();
        if (head != null) {
            head.signal();
        }
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
