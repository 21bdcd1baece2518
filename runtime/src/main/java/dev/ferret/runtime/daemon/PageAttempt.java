package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.runtime.projections.PageBatch;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A page whose transaction was asked to commit: its progression moves from {@code floor} to {@code end} with the
 * {@code stamp} as last_updated, which tells this attempt apart when the outcome has to be read back. Its mutable
 * fields are written only by the shard's one loop run in flight, inside the page's transaction.
 */
final class PageAttempt {

    final long floor;
    final long end;
    final OffsetDateTime stamp;
    final boolean silent;
    final boolean warmingUp;
    PageBatch batch;
    List<ChangeSet> changeSets = List.of();
    /** The page's outbox rows by message id, once written in its transaction. */
    Map<UUID, Object> outboxWritten = Map.of();
    /** Whether the page appended events its projections raised. */
    boolean appendedEvents;
    /** Set when the page's work returned inside its transaction: a failure after it may hide a commit. */
    boolean reachedCommit;
    /** The events the page applied, for the metrics once it committed. */
    List<EventEnvelope> events = List.of();
    /** How many dead letters the page wrote. */
    int deadLetters;
    /** The time source's reading when the page started loading. */
    long startedNanos;

    PageAttempt(long floor, long end, OffsetDateTime stamp, boolean silent, boolean warmingUp) {
        this.floor = floor;
        this.end = end;
        this.stamp = stamp;
        this.silent = silent;
        this.warmingUp = warmingUp;
    }
}
