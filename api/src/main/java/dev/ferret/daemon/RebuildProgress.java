package dev.ferret.daemon;

/**
 * How far a rebuild is.
 *
 * @param shardName       the shard being rebuilt
 * @param eventsDone      sequence positions replayed so far
 * @param eventsTotal     sequence positions to replay (the high water mark when the rebuild began)
 * @param eventsPerSecond rate since the rebuild began
 */
public record RebuildProgress(String shardName, long eventsDone, long eventsTotal, double eventsPerSecond) {
}
