package dev.ferret.daemon;

import java.time.Instant;

/**
 * A range of sequence numbers the high water mark moved past without events in it.
 *
 * @param fromSequence first skipped sequence
 * @param toSequence   last skipped sequence
 * @param reason       why it was safe, or why it was forced
 * @param at           when
 */
public record GapSkip(long fromSequence, long toSequence, String reason, Instant at) {
}
