package dev.ferret.runtime.dialect;

/**
 * The statements that prove a read replica has caught up, on an engine whose servers report their write-ahead log
 * positions ({@link Dialect#replicaSql}). Both read a position as a byte count from the log's origin, so the runtime
 * compares and keeps them as plain numbers; neither takes a parameter.
 *
 * @param primaryPosition  run on the primary: its current log write position, which every commit before the call
 *                         lies at or below
 * @param replayedPosition run on the replica: the position it has replayed through; NULL on a server that is not
 *                         replaying (started without recovery, or promoted), which proves nothing
 */
public record ReplicaSql(String primaryPosition, String replayedPosition) {
}
