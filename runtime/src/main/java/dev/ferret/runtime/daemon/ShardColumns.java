package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ShardState;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * Every shard's group, state, floor and mark cell in dense columns, so that the status summary reads tens of thousands
 * of shards as a pass over a few arrays instead of following each agent's objects (at 46,200 shards the pointer
 * chasing, not the counting, was the summary's cost).
 *
 * <p>Each agent takes a {@link Slot} when it is built and keeps it for life; slots are never reused (a released
 * tenant's agents leave theirs marked unregistered), so a late write of an agent that left can never land on another
 * agent's row. The agent's own threads write its state (the lifecycle, under its monitor) and its floor (the loop run
 * in flight); the registry marks it registered or not; the summary reads from any thread. Storage is chunked, so slots
 * never move and a write never races a copy.
 */
final class ShardColumns {

    private static final int CHUNK = 4096;
    private static final int MOST_CHUNKS = 1 << 16;
    /** In {@link Chunk#group}: the agent is not in the registry (built, not added yet, or removed). */
    private static final int UNREGISTERED = -1;

    /** One chunk of rows; a row's mark cell and name are set once, before the row is registered. */
    private static final class Chunk {
        final AtomicIntegerArray group = new AtomicIntegerArray(CHUNK);
        final AtomicIntegerArray state = new AtomicIntegerArray(CHUNK);
        final AtomicLongArray floor = new AtomicLongArray(CHUNK);
        final AtomicReferenceArray<LongSupplier> mark = new AtomicReferenceArray<>(CHUNK);
        final AtomicReferenceArray<String> name = new AtomicReferenceArray<>(CHUNK);

        Chunk() {
            for (int i = 0; i < CHUNK; i++) {
                group.set(i, UNREGISTERED);
                floor.set(i, -1);
            }
        }
    }

    /** One agent's row. */
    final class Slot {
        private final Chunk chunk;
        private final int row;
        private final int group;

        private Slot(Chunk chunk, int row, int group) {
            this.chunk = chunk;
            this.row = row;
            this.group = group;
        }

        void state(ShardState state) {
            chunk.state.set(row, state.ordinal());
        }

        void floor(long floor) {
            chunk.floor.set(row, floor);
        }

        /** In the registry: counted by the summary. */
        void registered() {
            chunk.group.set(row, group);
        }

        /** Out of the registry: no longer counted. */
        void unregistered() {
            chunk.group.set(row, UNREGISTERED);
        }
    }

    /** What a pass over every registered row sees of it. */
    @FunctionalInterface
    interface RowVisitor {
        void visit(int group, int state, long lag, Names names, int slot);
    }

    /** Looks a row's shard name up, for the few rows a pass keeps (the worst lags). */
    @FunctionalInterface
    interface Names {
        String of(int slot);
    }

    private final AtomicReferenceArray<Chunk> chunks = new AtomicReferenceArray<>(MOST_CHUNKS);
    private final AtomicInteger next = new AtomicInteger();

    /** A row for an agent of {@code group} named {@code name}, working towards {@code mark}; unregistered. */
    Slot add(int group, String name, LongSupplier mark) {
        int slot = next.getAndIncrement();
        int index = slot / CHUNK;
        if (index >= MOST_CHUNKS) {
            throw new IllegalStateException("more than " + (long) MOST_CHUNKS * CHUNK + " shards were built");
        }
        Chunk chunk = chunks.get(index);
        if (chunk == null) {
            chunks.compareAndSet(index, null, new Chunk());
            chunk = chunks.get(index);
        }
        int row = slot % CHUNK;
        chunk.state.set(row, ShardState.STOPPED.ordinal());
        chunk.mark.set(row, mark);
        chunk.name.set(row, name);
        return new Slot(chunk, row, group);
    }

    /** Visits every registered row: its group, its state's ordinal and its lag as {@link ShardAgent#lag()}. */
    void forEachRegistered(RowVisitor visitor) {
        int taken = next.get();
        Names names = slot -> chunks.get(slot / CHUNK).name.get(slot % CHUNK);
        for (int index = 0; index * CHUNK < taken; index++) {
            Chunk chunk = chunks.get(index);
            if (chunk == null) {
                // taken but not created yet: its rows are not registered
                continue;
            }
            int rows = Math.min(CHUNK, taken - index * CHUNK);
            for (int row = 0; row < rows; row++) {
                int group = chunk.group.get(row);
                if (group == UNREGISTERED) {
                    continue;
                }
                LongSupplier mark = chunk.mark.get(row);
                long lag = mark == null ? 0 : Math.max(0, mark.getAsLong() - Math.max(0, chunk.floor.get(row)));
                visitor.visit(group, chunk.state.get(row), lag, names, index * CHUNK + row);
            }
        }
    }
}
