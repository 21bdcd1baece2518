package dev.ferret.runtime;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventMetadata;
import dev.ferret.EventOperations;
import dev.ferret.EventMetadataSource;
import dev.ferret.IdLimits;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.daemon.AsyncDaemon;
import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.projections.StreamAggregates;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SE store. Immutable: {@link StoreAssembly} builds everything sessions need (the {@link StoreContext}, the
 * inline appliers, the daemon) before this is constructed; sessions only add their own buffers.
 */
public final class FerretDocumentStore implements DocumentStore {

    private static final Logger LOG = LoggerFactory.getLogger(FerretDocumentStore.class);

    private final StoreContext context;
    private final OwnedPools ownedPools;
    private final boolean ownsSerializer;
    private final List<String> createdAtStartup;
    private final List<ProjectionApplier> inlineAppliers;
    private final StreamAggregates streamAggregates;
    private final AsyncDaemon daemon;
    private final EventMetadataSource metadataSource;
    private final ReplicaReads replicaReads;
    private final VersionReads versionReads;
    /** Rendered once, as the context's other statements are: every session that archives or compacts uses them. */
    private final ArchiveSql archiveSql;

    FerretDocumentStore(StoreContext context, OwnedPools ownedPools, boolean ownsSerializer,
                        List<String> createdAtStartup, List<ProjectionApplier> inlineAppliers,
                        StreamAggregates streamAggregates, AsyncDaemon daemon, EventMetadataSource metadataSource,
                        ReplicaReads replicaReads, VersionReads versionReads) {
        this.metadataSource = metadataSource;
        this.replicaReads = replicaReads;
        this.versionReads = versionReads;
        this.archiveSql = context.dialect().archiveSql(context.names());
        this.context = context;
        this.ownedPools = ownedPools;
        this.ownsSerializer = ownsSerializer;
        this.createdAtStartup = List.copyOf(createdAtStartup);
        this.inlineAppliers = List.copyOf(inlineAppliers);
        this.streamAggregates = streamAggregates;
        this.daemon = daemon;
    }

    /** What the store is made of; shared by its sessions. */
    StoreContext context() {
        return context;
    }

    /** The pools the store opened itself and closes with itself. */
    OwnedPools ownedPools() {
        return ownedPools;
    }

    /** The daemon itself, for the store's own sessions. */
    AsyncDaemon asyncDaemon() {
        return daemon;
    }

    @Override
    public ProjectionDaemon daemon() {
        return daemon;
    }

    /** Where query sessions read: the replicas, and when the primaries instead. */
    ReplicaReads replicaReads() {
        return replicaReads;
    }

    /** The statements of stream archiving and compacting. */
    ArchiveSql archiveSql() {
        return archiveSql;
    }

    /** Which version's table serves query sessions' reads of a versioned projection's documents. */
    VersionReads versionReads() {
        return versionReads;
    }

    /**
     * {@inheritDoc} Query sessions of a database with a replica read there afterwards only once it is proven to
     * have replayed what the primary held when the wait ended (see {@link ReplicaReads}).
     */
    @Override
    public void waitForNonStaleProjectionData(Duration timeout) {
        daemon.waitForNonStale(timeout, shard -> true);
        replicaReads.storeWideWaitEnded(context.databases().all());
    }

    /** Waits for the async shards that write {@code documentType}; of {@code tenantId} alone when partitioned. */
    void waitForNonStale(Class<?> documentType, String tenantId, Duration timeout) {
        daemon.waitForNonStale(timeout, shard -> shard.documentTypes().contains(documentType), tenantId);
    }

    /**
     * Appends events a daemon page raised in the page's own transaction, on its connection {@code c}: through the
     * session's append path (stream versions, the tenant's sequence row, the owner locks, inline projections), one
     * unit of work per tenant in the order raised. What must run once the page's transaction has ended (withdrawing
     * the owner locks) is added to {@code afterTransaction}.
     *
     * @param raised (tenant, stream, event) in the order the page raised them
     */
    void appendWithin(Connection c, List<PageBatch.RaisedEvent> raised, OffsetDateTime now,
                      List<Runnable> afterTransaction) throws SQLException {
        Map<String, FerretDocumentSession> sessions = new LinkedHashMap<>();
        for (PageBatch.RaisedEvent event : raised) {
            EventOperations events = sessions.computeIfAbsent(event.tenantId(), tenant -> new FerretDocumentSession(
                    this, tenant, EventMetadata.NONE)).events().withMetadata(event.metadata());
            if (event.event() instanceof PageBatch.ArchiveStream) {
                events.archiveStream(event.streamId());
            } else {
                events.append(event.streamId(), event.event());
            }
        }
        for (FerretDocumentSession session : sessions.values()) {
            session.writeWithin(c, now, afterTransaction);
        }
    }

    List<ProjectionApplier> inlineAppliers() {
        return inlineAppliers;
    }

    /** The snapshot definitions sessions fold single streams with. */
    StreamAggregates streamAggregates() {
        return streamAggregates;
    }

    @Override
    public int readVersion(Class<?> documentType, String tenantId) {
        return versionReads.servingVersion(Objects.requireNonNull(documentType, "documentType"),
                IdLimits.requireTenantId(tenantId));
    }

    @Override
    public QuerySession querySession() {
        return querySession(StoreOptions.DEFAULT_TENANT);
    }

    /** Reads from the tenant's database's replica when it has one. */
    @Override
    public QuerySession querySession(String tenantId) {
        return new FerretQuerySession(this, IdLimits.requireTenantId(tenantId), true);
    }

    /** A query session that reads the primary: the daemon's after-commit listeners must see what it just committed. */
    QuerySession primaryQuerySession(String tenantId) {
        return new FerretQuerySession(this, IdLimits.requireTenantId(tenantId), false);
    }

    @Override
    public DocumentSession openSession() {
        return openSession(StoreOptions.DEFAULT_TENANT);
    }

    @Override
    public DocumentSession openSession(String tenantId) {
        return new FerretDocumentSession(this, IdLimits.requireTenantId(tenantId), metadataSource.current());
    }

    @Override
    public DatabaseEngine engine() {
        return context.dialect().engine();
    }

    /** What schema apply created when this store started; empty when everything already existed. */
    public List<String> createdAtStartup() {
        return createdAtStartup;
    }

    /** The store's own database. */
    public DataSource dataSource() {
        return context.dataSource();
    }

    /** The dialect of the store's engine; for tests and tools that run its statements directly. */
    public Dialect dialect() {
        return context.dialect();
    }

    /** The schema and table prefix the store's tables are named with. */
    public TableNames names() {
        return context.names();
    }

    /** The event statements rendered for this store's tables. */
    public EventSql eventSql() {
        return context.eventSql();
    }

    @Override
    public void close() {
        daemon.close();
        if (ownsSerializer && context.serializer() instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.warn("Closing the JSON serializer failed", e);
            }
        }
        ownedPools.close();
    }
}
