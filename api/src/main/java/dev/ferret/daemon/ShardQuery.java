package dev.ferret.daemon;

import java.util.EnumSet;
import java.util.Set;

/**
 * Which shards {@link ProjectionDaemon#shards(ShardQuery)} returns, and which page of them: every filter that is set
 * must match (null, or no states, matches everything). Shards come ordered by name, so pages are stable while no
 * shard is added.
 *
 * @param projection only the shards of this projection (or subscription)
 * @param tenantId   only the shards reading this tenant's events
 * @param database   only the shards reading this database's event log
 * @param states     only shards in one of these states
 * @param offset     how many matching shards to skip
 * @param limit      the most shards the page holds, 1 to {@value #MOST}
 */
public record ShardQuery(String projection, String tenantId, String database, Set<ShardState> states, int offset,
                         int limit) {

    /** The largest page: a status page must stay cheap however many shards there are. */
    public static final int MOST = 10_000;

    /** The default page size. */
    public static final int DEFAULT_LIMIT = 100;

    public ShardQuery {
        states = states == null || states.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(states));
        if (offset < 0) {
            throw new IllegalArgumentException("a shard query's offset must be 0 or more, was " + offset);
        }
        if (limit < 1 || limit > MOST) {
            throw new IllegalArgumentException("a shard query's limit must be between 1 and " + MOST + ", was "
                    + limit);
        }
    }

    /** Every shard, first page of {@value #DEFAULT_LIMIT}. */
    public static ShardQuery all() {
        return new ShardQuery(null, null, null, Set.of(), 0, DEFAULT_LIMIT);
    }

    public ShardQuery projection(String name) {
        return new ShardQuery(name, tenantId, database, states, offset, limit);
    }

    public ShardQuery tenant(String id) {
        return new ShardQuery(projection, id, database, states, offset, limit);
    }

    public ShardQuery database(String name) {
        return new ShardQuery(projection, tenantId, name, states, offset, limit);
    }

    public ShardQuery states(ShardState first, ShardState... more) {
        return new ShardQuery(projection, tenantId, database, EnumSet.of(first, more), offset, limit);
    }

    public ShardQuery page(int skip, int most) {
        return new ShardQuery(projection, tenantId, database, states, skip, most);
    }

    /** Whether a shard of {@code shardProjection}, {@code shardTenant} and {@code shardDatabase} may match. */
    public boolean matchesPlace(String shardProjection, String shardTenant, String shardDatabase) {
        return (projection == null || projection.equals(shardProjection))
                && (tenantId == null || tenantId.equals(shardTenant))
                && (database == null || database.equals(shardDatabase));
    }

    /** Whether {@code shard} matches every filter. */
    public boolean matches(ShardStatus shard) {
        return matchesPlace(shard.projection(), shard.tenantId(), shard.database())
                && (states.isEmpty() || states.contains(shard.state()));
    }
}
