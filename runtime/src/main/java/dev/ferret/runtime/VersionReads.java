package dev.ferret.runtime;

import dev.ferret.DatabaseException;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.daemon.ReadSwitches;
import dev.ferret.runtime.daemon.ShardNames;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which version's table serves a query session's reads of a document type a projection version above 1 writes. A
 * new version starts from an empty table of its own; until its shard (of the reader's tenant, when events are
 * partitioned) has caught up with the shard of the version before it, reads go to that version's table, so a deploy
 * of a new version never serves an empty or older read model. Caught up means its persisted progression reached the
 * prior version's; from then on the switch is final for that shard, so reads never go back.
 *
 * <p>Immutable but for {@link #switched}, a concurrent set that only grows (at most one entry per shard). Until a
 * shard switches, each read of its type reads the two progression rows (one indexed statement each); after, none.
 */
final class VersionReads implements ReadSwitches {

    private static final Logger LOG = LoggerFactory.getLogger(VersionReads.class);

    /** The projection version reads of a type go to: its name and version. */
    private record Writer(String projection, int version, Class<?> type) {
    }

    private final StoreContext context;
    private final ProgressionRows progression;
    private final Map<Class<?>, Writer> writers;
    /** Shards (of the newest versions) whose tables serve reads from now on. */
    private final Set<String> switched = ConcurrentHashMap.newKeySet();
    /** The newest version's writer, by projection name. */
    private final Map<String, Writer> byProjection = new HashMap<>();
    /** The prior version's progression as last read, per newest-version shard not switched yet. */
    private final Map<String, Long> priorSeen = new ConcurrentHashMap<>();

    private VersionReads(StoreContext context, Map<Class<?>, Writer> writers) {
        this.context = context;
        this.progression = new ProgressionRows(context.dialect(), context.dialect().daemonSql(context.names()));
        this.writers = Map.copyOf(writers);
        writers.values().forEach(writer -> byProjection.put(writer.projection(), writer));
    }

    /** For the snapshot and multi-stream projections registered above version 1 whose version reads go to. */
    static VersionReads of(ProjectionOptions projections, StoreContext context) {
        Map<Class<?>, Writer> writers = new HashMap<>();
        for (ProjectionOptions.Registration registration : projections.registrations()) {
            if (registration.projection() instanceof AggregateProjection<?, ?> aggregate
                    && aggregate.version() > 1
                    && aggregate.version() == context.documents().readVersion(aggregate.documentType())) {
                writers.put(aggregate.documentType(), new Writer(aggregate.name(), aggregate.version(),
                        aggregate.documentType()));
            }
        }
        return new VersionReads(context, writers);
    }

    /** The table {@code tenantId}'s query sessions read {@code type} from now. */
    <T> DocumentMapping<T> forRead(Class<T> type, String tenantId) {
        DocumentMapping<T> newest = context.mapping(type);
        Writer writer = writers.get(type);
        if (writer == null) {
            return newest;
        }
        String shard = shardName(ShardNames.base(writer.projection(), writer.version()), tenantId);
        if (switched.contains(shard)) {
            return newest;
        }
        String prior = shardName(ShardNames.base(writer.projection(), writer.version() - 1), tenantId);
        long newestAt;
        long priorAt;
        try {
            DataSource database = context.databases().of(tenantId).dataSource();
            newestAt = progression.read(database, shard);
            priorAt = progression.read(database, prior);
        } catch (SQLException e) {
            throw new DatabaseException("could not read whether " + shard + " has caught up with " + prior
                    + " to choose the table reads of " + type.getSimpleName() + " go to: " + e.getMessage(), e,
                    context.dialect().isTransientCause(e));
        }
        if (newestAt >= priorAt) {
            if (switched.add(shard)) {
                LOG.info("Reads of {} go to version {} from now on: {} reached {} ({} at {})", type.getSimpleName(),
                        writer.version(), shard, newestAt, prior, priorAt);
            }
            return newest;
        }
        return context.documents().priorVersion(type);
    }

    /** The version reads of {@code type} go to now for {@code tenantId}: for status pages and tests. */
    int servingVersion(Class<?> type, String tenantId) {
        Writer writer = writers.get(type);
        if (writer == null) {
            return context.documents().readVersion(type);
        }
        return forRead(type, tenantId) == context.mapping(type) ? writer.version() : writer.version() - 1;
    }

    @Override
    public boolean servesReads(String projection, int version, String tenantId) {
        Writer writer = byProjection.get(projection);
        if (writer == null) {
            return true;
        }
        boolean switchedToNewest = switched.contains(shardName(ShardNames.base(projection, writer.version()),
                tenantId));
        if (version == writer.version()) {
            return switchedToNewest;
        }
        return version == writer.version() - 1 && !switchedToNewest;
    }

    /**
     * Switches once the newest version's shard has reached the prior version's progression: read again only when
     * the shard passes the value read last, so a shard catching up costs one read per time it reaches it.
     */
    @Override
    public void pageCommitted(String projection, int version, String tenantId, long floor) {
        Writer writer = byProjection.get(projection);
        if (writer == null || version != writer.version()) {
            return;
        }
        String shard = shardName(ShardNames.base(projection, version), tenantId);
        if (switched.contains(shard) || floor < priorSeen.getOrDefault(shard, 0L)) {
            return;
        }
        String prior = shardName(ShardNames.base(projection, version - 1), tenantId);
        long priorAt;
        try {
            priorAt = progression.read(context.databases().of(tenantId).dataSource(), prior);
        } catch (SQLException e) {
            // the next page, or the next read of the type, decides
            LOG.debug("Could not read the progression of {} to decide whether reads switch to {}", prior, shard, e);
            return;
        }
        if (floor >= priorAt) {
            if (switched.add(shard)) {
                LOG.info("Reads of {} go to version {} from now on: {} reached {} ({} at {})",
                        writer.type().getSimpleName(), version, shard, floor, prior, priorAt);
            }
            priorSeen.remove(shard);
        } else {
            priorSeen.put(shard, priorAt);
        }
    }

    private String shardName(String base, String tenantId) {
        return context.partitionedByTenant() ? base + "@" + tenantId : base;
    }
}
