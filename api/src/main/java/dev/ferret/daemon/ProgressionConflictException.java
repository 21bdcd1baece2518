package dev.ferret.daemon;

import dev.ferret.FerretException;

/**
 * A shard's progression row was not where this runner left it: another runner advanced the shard. The page was
 * rolled back and the shard stopped, so nothing was written twice.
 */
public class ProgressionConflictException extends FerretException {

    private static final long serialVersionUID = 1L;

    public ProgressionConflictException(String shardName, long expectedFloor) {
        super("progression of shard '" + shardName + "' is no longer at " + expectedFloor
                + ": another runner advanced it out of order; this runner stopped the shard and rolled back its page");
    }
}
