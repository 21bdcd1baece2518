package dev.ferret.runtime.daemon;

/**
 * Where query sessions read a projection version's documents: the store's answer (a new version's reads switch from
 * the prior version's tables once it caught up), handed to the daemon when it is built. {@link #servesReads} is read
 * by status on any thread and does no database work; {@link #pageCommitted} is told by a shard of a version above 1
 * after each page, on its loop, and may read the prior version's progression to decide a switch.
 */
public interface ReadSwitches {

    /** Every shard serves reads: a store without projection versions above 1. */
    ReadSwitches NONE = new ReadSwitches() {
        @Override
        public boolean servesReads(String projection, int version, String tenantId) {
            return true;
        }

        @Override
        public void pageCommitted(String projection, int version, String tenantId, long floor) {
        }
    };

    /**
     * Whether this node's query sessions read the documents of {@code projection}'s version {@code version} for
     * {@code tenantId} (the default tenant for a shard of the whole log) from the tables that version writes.
     */
    boolean servesReads(String projection, int version, String tenantId);

    /** That version's shard of {@code tenantId} committed up to {@code floor}: reads may switch to it now. */
    void pageCommitted(String projection, int version, String tenantId, long floor);
}
