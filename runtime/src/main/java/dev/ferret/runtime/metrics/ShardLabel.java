package dev.ferret.runtime.metrics;

/**
 * What a shard's metrics are recorded under: its projection and database always, its own name only when the store
 * asks for metrics per shard ({@code daemon.metrics-per-shard}), so that by default the series do not grow with
 * tenants.
 *
 * @param shard      the shard's name, or null when metrics are per projection and database
 * @param projection the projection (or subscription) it runs
 * @param database   the database whose event log it reads
 */
public record ShardLabel(String shard, String projection, String database) {

    /** The label of shard {@code name}, naming it only when {@code perShard}. */
    public static ShardLabel of(String name, String projection, String database, boolean perShard) {
        return new ShardLabel(perShard ? name : null, projection, database);
    }
}
