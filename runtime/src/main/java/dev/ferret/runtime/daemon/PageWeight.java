package dev.ferret.runtime.daemon;

import dev.ferret.runtime.documents.DocumentChanges;

/**
 * What one shard's events weigh once applied, learnt from its last pages, for the load budget's byte dimension: a
 * page reserves its events times the bytes an event of this shard took lately (the JSON as UTF-16 of every document
 * it built, a document rewritten by several events counting each time, plus {@value #LEAST_PER_EVENT} bytes for the
 * event itself), and holds no more events than its room allows. A projection
 * that fans one event out to thousands of documents thus learns, after its first page, to load a few events at a
 * time; the estimate rises at once and falls by half a page, so one light page does not undo it. Until its first page
 * committed nothing is known, so that page holds one event: a shard whose one event builds 11,000 documents must not
 * load a page of them before the budget has seen what one weighs.
 *
 * <p>Owned by the shard's page loop: only the run in flight reads or changes it.
 */
final class PageWeight {

    /** The least an event counts for: its own row and instance. */
    static final long LEAST_PER_EVENT = 512;
    /** Before the first page: a document of a few KiB. */
    static final long FIRST_GUESS = 4 * LEAST_PER_EVENT;

    private final boolean counted;
    private long perEvent = FIRST_GUESS;
    /** Whether a page of this shard committed since the loop was made: until then an event's weight is a guess. */
    private boolean learnt;

    PageWeight(LoadBudget budget) {
        this.counted = budget.countsBytes();
    }

    /** The bytes {@code events} of this shard are expected to take; 0 when the budget counts no bytes. */
    long bytesFor(long events) {
        return counted ? events * perEvent : 0;
    }

    /** The most events of {@code limit} that fit the bytes of {@code room}; at least one. */
    int eventsWithin(int limit, LoadBudget.Reservation room) {
        if (!counted || room.bytes() == 0) {
            return limit;
        }
        if (!learnt) {
            return Math.min(limit, 1);
        }
        return (int) Math.max(1, Math.min(limit, room.bytes() / perEvent));
    }

    /** A page of {@code events} committed having written {@code changes}: what its events weighed. */
    void committed(int events, DocumentChanges changes) {
        if (!counted || events == 0) {
            return;
        }
        long[] bytes = {0};
        long[] kept = {0};
        if (changes != null) {
            changes.forEachWritten((key, json) -> {
                bytes[0] += 2L * (key.id().length() + (json == null ? 0 : json.length()));
                kept[0]++;
            });
        }
        // every document the page built weighed about what a kept one does: events that rewrite the same documents
        // cost them each time, though the page keeps only the last of each
        long built = changes == null ? 0 : Math.max(kept[0], changes.changesMade());
        long builtBytes = kept[0] == 0 ? bytes[0] : bytes[0] / kept[0] * built;
        long observed = LEAST_PER_EVENT + builtBytes / events;
        // the first observation replaces the guess outright; later ones fall by half at most
        perEvent = learnt ? Math.max(observed, Math.max(LEAST_PER_EVENT, perEvent / 2)) : observed;
        learnt = true;
    }

    long perEvent() {
        return perEvent;
    }
}
