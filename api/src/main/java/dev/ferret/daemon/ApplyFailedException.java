package dev.ferret.daemon;

import dev.ferret.FerretException;

/** A projection threw while applying an event; the shard paused (or the event went to the dead letters). */
public class ApplyFailedException extends FerretException {

    private static final long serialVersionUID = 1L;

    private final long sequence;

    public ApplyFailedException(String shardName, long sequence, String typeName, String streamId, Throwable cause) {
        super("shard '" + shardName + "' failed to apply " + typeName + " at sequence " + sequence + " of stream '"
                + streamId + "': " + cause, cause);
        this.sequence = sequence;
    }

    /**
     * For a tenant's shard, whose progression counts the tenant's own numbers: names both that number and the
     * store-wide sequence.
     */
    public ApplyFailedException(String shardName, long sequence, String typeName, String streamId, String tenantId,
                                long tenantSequence, Throwable cause) {
        super("shard '" + shardName + "' failed to apply " + typeName + " at sequence " + sequence + " (number "
                + tenantSequence + " of tenant '" + tenantId + "') of stream '" + streamId + "': " + cause, cause);
        this.sequence = sequence;
    }

    /** The sequence of the event that failed. */
    public long sequence() {
        return sequence;
    }
}
