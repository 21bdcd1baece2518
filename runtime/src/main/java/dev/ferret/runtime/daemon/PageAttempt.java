package dev.ferret.runtime.daemon;

import java.time.OffsetDateTime;

/**
 * A page about to be written: its progression moves from {@code floor} to {@code end} with the {@code stamp} as
 * last_updated, which tells this attempt apart when its commit's outcome has to be read back. {@code silent}: a
 * rebuild replays it with listeners and side effects suppressed; {@code warmingUp}: a gated version replays it with
 * side effects held back. {@code startedNanos} is the time source's reading when the page started loading.
 * {@code shadow}: the rebuild replaying behind the live tables this page belongs to, or null for a live page.
 */
record PageAttempt(long floor, long end, OffsetDateTime stamp, boolean silent, boolean warmingUp, long startedNanos,
                   ShadowReplay shadow) {

    /** The progression row the page moves: the shard's own, or its replay's. */
    String row(String shard) {
        return shadow == null ? shard : shadow.row();
    }
}
