package dev.ferret.daemon;

/** What a shard is doing. */
public enum ShardState {
    /** Processing, or caught up and waiting for the high water mark to move. */
    RUNNING,
    /** Replaying from zero after a rebuild request; async listeners are suppressed. */
    REBUILDING,
    /** Cannot reach the database; retrying with backoff by itself. */
    RETRYING,
    /** Stopped on an apply error (or a progression conflict); resumes when restarted. */
    PAUSED,
    /** Paused by an operator ({@link ProjectionDaemon#hold}); not an error, resumes when restarted. */
    HELD,
    /** Not running on this node. */
    STOPPED
}
