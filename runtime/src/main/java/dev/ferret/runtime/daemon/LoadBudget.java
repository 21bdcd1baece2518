package dev.ferret.runtime.daemon;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;

/**
 * The shared budget of events a node's agents may have loaded but not yet committed. An agent reserves room for a
 * page before loading, trims the reservation to what the page held, and releases it when the page committed or
 * failed. While there is room and nobody waits, reservations go straight through; otherwise agents queue in one FIFO
 * line and are let in a page at a time, so none starves behind a bigger neighbour. A reservation is always granted
 * when nothing at all is in flight: a budget set too low makes a node slow, never stuck. Under memory pressure (used
 * heap after GC past the threshold, signalled by the JVM's collection-usage notifications) nothing new is granted
 * until the work in flight has drained.
 *
 * <p>One lock guards the counters and the line; a capacity of 0 makes the budget inert (no lock is ever taken).
 */
final class LoadBudget {

    /** Room granted to one page. */
    static final class Reservation {
        private long events;

        Reservation(long events) {
            this.events = events;
        }

        long events() {
            return events;
        }
    }

    private static final Reservation UNBOUNDED = new Reservation(0);
    private static final long RECHECK_MILLIS = 100;

    private final long capacity;
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Condition> line = new ArrayDeque<>();
    private long inFlight;
    private volatile boolean memoryPressure;
    private final MemorySignal memory;

    LoadBudget(long capacity, double memoryThreshold) {
        this.capacity = capacity;
        this.memory = capacity > 0 && memoryThreshold > 0 && memoryThreshold < 1
                ? new MemorySignal(memoryThreshold) : null;
    }

    boolean isBounded() {
        return capacity > 0;
    }

    /**
     * Waits for room for {@code events}, in line; gives up and returns null when {@code cancelled} turns true
     * (checked at least every 100 ms).
     */
    Reservation reserve(long events, BooleanSupplier cancelled) throws InterruptedException {
        if (capacity <= 0) {
            return UNBOUNDED;
        }
        long wanted = Math.min(events, capacity);
        lock.lock();
        try {
            if (line.isEmpty() && admits(wanted)) {
                inFlight += wanted;
                return new Reservation(wanted);
            }
            Condition turn = lock.newCondition();
            line.addLast(turn);
            try {
                while (line.peekFirst() != turn || !admits(wanted)) {
                    if (cancelled.getAsBoolean()) {
                        return null;
                    }
                    turn.await(RECHECK_MILLIS, TimeUnit.MILLISECONDS);
                    if (memoryPressure && memory != null) {
                        memoryPressure = memory.stillAbove();
                    }
                }
                inFlight += wanted;
                return new Reservation(wanted);
            } finally {
                line.remove(turn);
                signalHead();
            }
        } finally {
            lock.unlock();
        }
    }

    private boolean admits(long wanted) {
        if (inFlight == 0) {
            return true;
        }
        return !memoryPressure && inFlight + wanted <= capacity;
    }

    /** Gives back what the page did not need. */
    void trim(Reservation reservation, long actual) {
        if (reservation == null || reservation == UNBOUNDED || actual >= reservation.events) {
            return;
        }
        lock.lock();
        try {
            inFlight -= reservation.events - actual;
            reservation.events = actual;
            signalHead();
        } finally {
            lock.unlock();
        }
    }

    /** The page committed or failed: its room is free. */
    void release(Reservation reservation) {
        if (reservation == null || reservation == UNBOUNDED) {
            return;
        }
        lock.lock();
        try {
            inFlight -= reservation.events;
            reservation.events = 0;
            if (memoryPressure && memory != null) {
                memoryPressure = memory.stillAbove();
            }
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

    int waiting() {
        lock.lock();
        try {
            return line.size();
        } finally {
            lock.unlock();
        }
    }

    /** For tests and for the memory signal: no new room until what is in flight drains. */
    void memoryPressure(boolean pressure) {
        this.memoryPressure = pressure;
        if (!pressure) {
            lock.lock();
            try {
                signalHead();
            } finally {
                lock.unlock();
            }
        }
    }

    void close() {
        if (memory != null) {
            memory.close();
        }
    }

    /** Heap pools' collection-usage thresholds: the JVM tells us after a GC that left too much in use. */
    private final class MemorySignal {
        private final List<MemoryPoolMXBean> pools;
        private final NotificationListener listener = (notification, handback) -> {
            if (MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED.equals(notification.getType())) {
                memoryPressure = true;
            }
        };

        MemorySignal(double threshold) {
            this.pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(pool -> pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()
                            && pool.getUsage().getMax() > 0)
                    .toList();
            for (MemoryPoolMXBean pool : pools) {
                pool.setCollectionUsageThreshold((long) (pool.getUsage().getMax() * threshold));
            }
            ((NotificationEmitter) ManagementFactory.getMemoryMXBean()).addNotificationListener(listener, null, null);
        }

        /** Checked only while under pressure: whether any pool is still past its threshold after its last GC. */
        boolean stillAbove() {
            for (MemoryPoolMXBean pool : pools) {
                if (pool.isCollectionUsageThresholdExceeded()) {
                    return true;
                }
            }
            return false;
        }

        void close() {
            try {
                ((NotificationEmitter) ManagementFactory.getMemoryMXBean()).removeNotificationListener(listener);
            } catch (Exception ignored) {
                // already gone
            }
        }
    }
}
