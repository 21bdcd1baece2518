package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;

/**
 * The slice of the event log one shard reads: the whole log of the store's database, or one tenant's own sequence
 * in the database the tenant lives in.
 *
 * @param tenantId null for the whole log
 * @param database where the slice is read and the shard's documents and progression are written
 */
record LogPartition(String tenantId, TenantDatabases.Database database) {

    boolean perTenant() {
        return tenantId != null;
    }

    /** The shard's progression name: {@code base} for the whole log, {@code base@tenant} for a tenant's. */
    String shardName(String base) {
        return tenantId == null ? base : base + "@" + tenantId;
    }
}
