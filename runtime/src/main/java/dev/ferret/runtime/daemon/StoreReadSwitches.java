package dev.ferret.runtime.daemon;

/**
 * The daemon's hold on the store's {@link ReadSwitches}: the store is built after the daemon, and hands its answer
 * over before the daemon starts ({@link AsyncDaemon#readSwitches}); until then every shard serves reads.
 */
final class StoreReadSwitches implements ReadSwitches {

    private volatile ReadSwitches store = ReadSwitches.NONE;

    void use(ReadSwitches switches) {
        this.store = switches;
    }

    @Override
    public boolean servesReads(String projection, int version, String tenantId) {
        return store.servesReads(projection, version, tenantId);
    }

    @Override
    public void pageCommitted(String projection, int version, String tenantId, long floor) {
        store.pageCommitted(projection, version, tenantId, floor);
    }
}
