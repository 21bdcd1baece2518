package dev.ferret.runtime.daemon;

/**
 * One shard's place in the shared load budget's line. A shard that finds no room joins the line and holds no thread
 * until the budget hands it room ({@link #granted}), which wakes the shard; room granted to a shard that stopped
 * meanwhile goes straight back.
 *
 * <p>Guarded by the shard's {@link ShardLifecycle} monitor, so "in line" and "may run" are read together.
 */
final class BudgetLine {

    private final LoadBudget budget;
    private final ShardLifecycle lifecycle;
    private final Runnable wake;
    private final LoadBudget.Waiter waiter = this::granted;

    // guarded by lifecycle
    /** In the budget's line: no run until the grant (which only the budget gives) wakes the shard. */
    private boolean inLine;
    /** Room the budget granted while the shard was in line, for its next page. */
    private LoadBudget.Reservation grantedRoom;

    BudgetLine(LoadBudget budget, ShardLifecycle lifecycle, Runnable wake) {
        this.budget = budget;
        this.lifecycle = lifecycle;
        this.wake = wake;
    }

    /** Whether the shard waits for a grant; read with the lifecycle's monitor held. */
    boolean inLine() {
        synchronized (lifecycle) {
            return inLine;
        }
    }

    /**
     * The room granted while the shard waited in line, or room for {@code events} now, or null with the shard in
     * line: it then holds no thread until {@link #granted} wakes it.
     */
    LoadBudget.Reservation take(long events) {
        return take(events, 0);
    }

    /** As {@link #take(long)}, with room for {@code bytes} too where the budget counts them. */
    LoadBudget.Reservation take(long events, long bytes) {
        synchronized (lifecycle) {
            LoadBudget.Reservation granted = grantedRoom;
            if (granted != null) {
                grantedRoom = null;
                return granted;
            }
        }
        LoadBudget.Reservation now = budget.tryReserve(events, bytes, waiter);
        if (now == null) {
            synchronized (lifecycle) {
                // the grant may have come between the two: then it is waiting in grantedRoom
                inLine = grantedRoom == null;
            }
        }
        return now;
    }

    /** The budget's hand-over, on the thread that freed the room. */
    private void granted(LoadBudget.Reservation room) {
        synchronized (lifecycle) {
            inLine = false;
            if (!lifecycle.stopping()) {
                grantedRoom = room;
                room = null;
            }
        }
        if (room != null) {
            budget.release(room); // stopped while in line
            return;
        }
        wake.run();
    }

    /** After a stop: the shard leaves the budget's line, and room granted but not used goes back. */
    void leave() {
        budget.leave(waiter);
        LoadBudget.Reservation unused;
        synchronized (lifecycle) {
            inLine = false;
            unused = grantedRoom;
            grantedRoom = null;
        }
        budget.release(unused);
    }
}
