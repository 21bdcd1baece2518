package dev.ferret.daemon;

import java.time.Duration;
import java.util.List;

/**
 * The high water mark detector's view.
 *
 * @param mark                highest sequence below which no gap can still fill
 * @param highestSeen         highest sequence in the event log at the last read
 * @param healthy             whether the last read succeeded
 * @param error               the last read's failure, else null
 * @param stalledFor          how long the mark has been held at a gap by an append transaction that stays open, else
 *                            zero
 * @param recentSkips         the latest gaps moved past, newest last (a bounded window; the totals count them all)
 * @param totalSkips          how many gaps the mark has moved past since the daemon started
 * @param totalSkippedSequences how many sequence numbers those gaps held
 */
public record HighWaterMarkStatus(long mark, long highestSeen, boolean healthy, Throwable error, Duration stalledFor,
                                  List<GapSkip> recentSkips, long totalSkips, long totalSkippedSequences) {

    public HighWaterMarkStatus(long mark, long highestSeen, boolean healthy, Throwable error, Duration stalledFor,
                               List<GapSkip> recentSkips) {
        this(mark, highestSeen, healthy, error, stalledFor, recentSkips, recentSkips.size(),
                recentSkips.stream().mapToLong(skip -> skip.toSequence() - skip.fromSequence() + 1).sum());
    }

    public boolean stalled() {
        return !stalledFor.isZero();
    }
}
