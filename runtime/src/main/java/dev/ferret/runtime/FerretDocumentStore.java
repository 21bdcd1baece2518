package dev.ferret.runtime;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.IdLimits;
import dev.ferret.JsonSerializer;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.projections.SideEffectPublisher;
import dev.ferret.runtime.daemon.AsyncDaemon;
import dev.ferret.runtime.daemon.ShardNames;
import dev.ferret.runtime.tx.TransactionRunner;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.events.EventTypes;
import dev.ferret.runtime.json.JsonbSerializer;
import dev.ferret.runtime.schema.SchemaMigrator;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SE store. Immutable after construction: everything sessions need (statements, mappings, serializer) is
 * rendered here once and shared; sessions only add their own buffers.
 */
public final class FerretDocumentStore implements DocumentStore {

    private static final Logger LOG = LoggerFactory.getLogger(FerretDocumentStore.class);
    private static final Duration MIGRATION_LOCK_TIMEOUT = Duration.ofSeconds(60);

    private final DataSource dataSource;
    private final HikariDataSource ownedPool;
    private final Dialect dialect;
    private final TableNames names;
    private final EventSql eventSql;
    private final Map<Class<?>, DocumentMapping<?>> documents;
    private final Map<String, DocumentMapping<?>> versionedMappings;
    private final Map<Class<?>, DocumentMapping<?>> baseMappings;
    private final Map<Class<?>, Integer> readVersions = new LinkedHashMap<>();
    private final EventTypes eventTypes;
    private final JsonSerializer serializer;
    private final boolean ownsSerializer;
    private final Clock clock;
    private final TransactionRunner transactions;
    private final List<String> createdAtStartup;
    private final List<ProjectionApplier> inlineAppliers;
    private final SideEffectPublisher sideEffectPublisher;
    private final AsyncDaemon daemon;
    private final boolean partitionedByTenant;
    private final dev.ferret.runtime.tenancy.TenantDatabases databases;

    FerretDocumentStore(StoreOptions options, DataSource dataSource, HikariDataSource ownedPool, Dialect dialect,
                        StoreSeams seams) {
        this.dataSource = dataSource;
        this.ownedPool = ownedPool;
        this.dialect = dialect;
        this.clock = seams.clock();
        this.transactions = seams.transactions();
        this.names = new TableNames(options.getSchema() != null ? options.getSchema() : dialect.defaultSchema(),
                options.getTablePrefix());
        if (dialect.reservedWords().contains(names.schema().toUpperCase(java.util.Locale.ROOT))) {
            throw new dev.ferret.ConfigurationException("schema '" + names.schema() + "' is a reserved word on "
                    + dialect.engine() + ", and Ferret does not quote names: choose another schema name");
        }
        this.partitionedByTenant = options.events().isPartitionedByTenant();
        // names are checked here, once, before anything touches a database: a name that does not fit would
        // otherwise fail (or be cut) only when its shard first commits
        options.projections().validate();
        ShardNames.check(options.projections(), partitionedByTenant, options.daemon().getMode(), dialect, names);
        this.databases = new dev.ferret.runtime.tenancy.TenantDatabases(dataSource, options.tenancy(),
                partitionedByTenant);
        this.eventSql = dialect.eventSql(names);
        Map<Class<?>, DocumentMapping<?>> mappings = new LinkedHashMap<>();
        for (StoreOptions.DocumentType<?> type : options.documents().types()) {
            mappings.put(type.type(), DocumentMapping.of(type, dialect, names));
        }
        // a projection's documents need no separate registration
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            for (Class<?> type : registration.projection().documentTypes()) {
                mappings.computeIfAbsent(type, t -> DocumentMapping.of(new StoreOptions.DocumentType<>(t,
                        StoreOptions.requireIdentifier("document name of " + t.getName(),
                                t.getSimpleName().toLowerCase(java.util.Locale.ROOT)), null), dialect, names));
            }
        }
        // a version above 1 of an aggregate projection keeps its documents in a table of its own, so it can rebuild
        // while the prior version serves reads; this store reads the highest version it registers
        Map<String, DocumentMapping<?>> versioned = new LinkedHashMap<>();
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            if (registration.projection() instanceof dev.ferret.projections.AggregateProjection<?, ?> aggregate
                    && aggregate.version() > 1) {
                Class<?> type = aggregate.documentType();
                DocumentMapping<?> base = mappings.get(type);
                DocumentMapping<?> mapping = DocumentMapping.of(new StoreOptions.DocumentType<>(type,
                        StoreOptions.requireIdentifier("document name of " + type.getName() + " version "
                                + aggregate.version(), base.name() + "_v" + aggregate.version()), null),
                        dialect, names);
                versioned.put(type.getName() + "@" + aggregate.version(), mapping);
                if (!readVersions.containsKey(type) || readVersions.get(type) < aggregate.version()) {
                    readVersions.put(type, aggregate.version());
                }
            }
        }
        this.versionedMappings = Map.copyOf(versioned);
        this.baseMappings = Map.copyOf(mappings);
        Map<Class<?>, DocumentMapping<?>> reads = new LinkedHashMap<>(mappings);
        readVersions.forEach((type, version) -> reads.put(type, versioned.get(type.getName() + "@" + version)));
        this.documents = Map.copyOf(reads);
        this.eventTypes = new EventTypes(options.events().byAlias());
        this.ownsSerializer = options.getSerializer() == null;
        this.serializer = ownsSerializer ? new JsonbSerializer() : options.getSerializer();

        SchemaSql schemaSql = dialect.schemaSql(names);
        List<SchemaObject> wanted = new ArrayList<>(schemaSql.objects());
        mappings.values().forEach(mapping -> wanted.add(mapping.table()));
        versionedMappings.values().forEach(mapping -> wanted.add(mapping.table()));
        List<String> created = new ArrayList<>();
        for (dev.ferret.runtime.tenancy.TenantDatabases.Database database : databases.all()) {
            SchemaMigrator migrator = new SchemaMigrator(database.dataSource(), dialect, names.schema(),
                    schemaSql.createSchema(), wanted, MIGRATION_LOCK_TIMEOUT);
            if (options.isApplyAllDatabaseChangesOnStartup()) {
                List<String> here = migrator.apply();
                here.forEach(object -> created.add(database == databases.main() ? object
                        : database.name() + ":" + object));
            } else {
                migrator.verify();
            }
        }
        this.createdAtStartup = List.copyOf(created);
        if (!dialect.serverReportSql(names).isEmpty()) {
            for (dev.ferret.runtime.tenancy.TenantDatabases.Database database : databases.all()) {
                try (java.sql.Connection c = database.dataSource().getConnection()) {
                    dialect.checkServer(c, names);
                } catch (java.sql.SQLException e) {
                    throw new dev.ferret.DatabaseException("Reading the settings of database " + database.name()
                            + " failed: " + e.getMessage(), e);
                }
            }
        }
        options.daemon().validate();
        List<ProjectionApplier> inline = new ArrayList<>();
        List<ProjectionApplier> async = new ArrayList<>();
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            ProjectionApplier applier = ProjectionApplier.of(registration.projection(), this);
            (registration.lifecycle() == Lifecycle.INLINE ? inline : async).add(applier);
        }
        for (dev.ferret.subscriptions.SubscriptionBase subscription : options.projections().subscriptions()) {
            async.add(ProjectionApplier.of(subscription, this));
        }
        this.inlineAppliers = List.copyOf(inline);
        this.sideEffectPublisher = options.projections().getOutboxPublisher();
        // the daemon's threads read this copy; the caller's settings are sealed against changes from here on
        DaemonSettings settings = options.daemon().sealForStart();
        this.daemon = new AsyncDaemon(this, settings, async, options.projections().asyncListeners(),
                seams.executors().apply(Math.max(1, Math.min(settings.getWorkerThreads(),
                        partitionedByTenant ? Integer.MAX_VALUE : async.size()))), seams.retries());
        LOG.info("Ferret store on {} (schema {}, prefix {}) with {} document types, {} async and {} inline"
                        + " projections, daemon {}", dialect.engine(), names.schema(), names.prefix(),
                documents.size(), async.size(), inline.size(), settings.getMode());
        if (settings.getMode() != DaemonMode.DISABLED) {
            daemon.start();
        }
    }

    /** The daemon itself, for the store's own sessions. */
    AsyncDaemon asyncDaemon() {
        return daemon;
    }

    @Override
    public ProjectionDaemon daemon() {
        return daemon;
    }

    @Override
    public void waitForNonStaleProjectionData(Duration timeout) {
        daemon.waitForNonStale(timeout, shard -> true);
    }

    /** Waits for the async shards that write {@code documentType}; of {@code tenantId} alone when partitioned. */
    void waitForNonStale(Class<?> documentType, String tenantId, Duration timeout) {
        daemon.waitForNonStale(timeout, shard -> shard.documentTypes().contains(documentType), tenantId);
    }

    /** Where messages raised as projection side effects go, from the outbox after their page committed. */
    public SideEffectPublisher sideEffectPublisher() {
        return sideEffectPublisher;
    }

    /**
     * Appends events a daemon page raised in the page's own transaction, on its connection {@code c}: through the
     * session's append path (stream versions, the tenant's sequence row, the append fence, inline projections), one
     * unit of work per tenant in the order raised. What must run once the page's transaction has ended (the append
     * fence's release) is added to {@code afterTransaction}.
     *
     * @param raised (tenant, stream, event) in the order the page raised them
     */
    public void appendWithin(Connection c, List<PageBatch.RaisedEvent> raised, OffsetDateTime now,
                             List<Runnable> afterTransaction) throws SQLException {
        Map<String, FerretDocumentSession> sessions = new LinkedHashMap<>();
        for (PageBatch.RaisedEvent event : raised) {
            sessions.computeIfAbsent(event.tenantId(), tenant -> new FerretDocumentSession(this, tenant))
                    .events().append(event.streamId(), event.event());
        }
        for (FerretDocumentSession session : sessions.values()) {
            session.writeWithin(c, now, afterTransaction);
        }
    }

    List<ProjectionApplier> inlineAppliers() {
        return inlineAppliers;
    }

    @Override
    public QuerySession querySession() {
        return querySession(StoreOptions.DEFAULT_TENANT);
    }

    @Override
    public QuerySession querySession(String tenantId) {
        return new FerretQuerySession(this, IdLimits.requireTenantId(tenantId));
    }

    @Override
    public DocumentSession openSession() {
        return openSession(StoreOptions.DEFAULT_TENANT);
    }

    @Override
    public DocumentSession openSession(String tenantId) {
        return new FerretDocumentSession(this, IdLimits.requireTenantId(tenantId));
    }

    @Override
    public DatabaseEngine engine() {
        return dialect.engine();
    }

    /** What schema apply created when this store started; empty when everything already existed. */
    public List<String> createdAtStartup() {
        return createdAtStartup;
    }

    /** The store's own database. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** The database {@code tenantId} lives in. */
    public DataSource dataSourceOf(String tenantId) {
        return databases.of(tenantId).dataSource();
    }

    public dev.ferret.runtime.tenancy.TenantDatabases databases() {
        return databases;
    }

    /** Whether each tenant has its own event sequence and its own shards. */
    public boolean partitionedByTenant() {
        return partitionedByTenant;
    }

    public Dialect dialect() {
        return dialect;
    }

    public TableNames names() {
        return names;
    }

    public EventSql eventSql() {
        return eventSql;
    }

    public EventTypes eventTypes() {
        return eventTypes;
    }

    public JsonSerializer serializer() {
        return serializer;
    }

    /**
     * Reads an event row of (seq_id, id, stream_id, version, type, data, timestamp, tenant_id).
     *
     * @throws dev.ferret.UnknownEventTypeException when its type alias is not registered
     */
    public dev.ferret.EventEnvelope readEvent(java.sql.ResultSet rs) throws java.sql.SQLException {
        long sequence = rs.getLong(1);
        String alias = rs.getString(5);
        Class<?> type = eventTypes.typeOf(alias, sequence);
        return new dev.ferret.EventEnvelope(sequence, java.util.UUID.fromString(rs.getString(2)), rs.getString(3),
                rs.getLong(4), alias, rs.getObject(7, java.time.OffsetDateTime.class), rs.getString(8),
                serializer.fromJson(rs.getString(6), type));
    }

    public TransactionRunner transactions() {
        return transactions;
    }

    public Clock clock() {
        return clock;
    }

    @SuppressWarnings("unchecked")
    public <T> DocumentMapping<T> mapping(Class<T> type) {
        Objects.requireNonNull(type, "document type");
        DocumentMapping<?> mapping = documents.get(type);
        if (mapping == null) {
            throw new FerretException("document type " + type.getName()
                    + " is not registered; add options.documents().register(" + type.getSimpleName() + ".class)");
        }
        return (DocumentMapping<T>) mapping;
    }

    /** The mapping one version of a projection writes: the base table for 1, a table of its own above. */
    @SuppressWarnings("unchecked")
    public <T> DocumentMapping<T> mapping(Class<T> type, int version) {
        if (version <= 1) {
            DocumentMapping<?> base = baseMappings.get(type);
            if (base == null) {
                return mapping(type);
            }
            return (DocumentMapping<T>) base;
        }
        return (DocumentMapping<T>) versionedMappings.get(type.getName() + "@" + version);
    }

    @Override
    public void close() {
        daemon.close();
        if (ownsSerializer && serializer instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.warn("Closing the JSON serializer failed", e);
            }
        }
        if (ownedPool != null) {
            ownedPool.close();
        }
    }
}
