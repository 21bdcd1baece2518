package dev.ferret.runtime;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseException;
import dev.ferret.JsonSerializer;
import dev.ferret.StoreOptions;
import dev.ferret.StreamArchived;
import dev.ferret.StreamCompacted;
import dev.ferret.StreamUnarchived;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.daemon.AsyncDaemon;
import dev.ferret.runtime.daemon.ShardNames;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentMappings;
import dev.ferret.runtime.events.EventTypes;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.projections.StreamAggregates;
import dev.ferret.subscriptions.SubscriptionBase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a store in order: checks the options, builds the {@link StoreContext}, applies or verifies the schema on
 * every database, builds the projection appliers and the daemon, then the store, and only then starts the daemon.
 * Every constructor on the way only assigns; the one thread-starting step is the last.
 */
final class StoreAssembly {

    private static final Logger LOG = LoggerFactory.getLogger(StoreAssembly.class);
    private static final Duration MIGRATION_LOCK_TIMEOUT = Duration.ofSeconds(60);

    private StoreAssembly() {
    }

    static FerretDocumentStore assemble(StoreOptions options, DataSource dataSource, OwnedPools ownedPools,
                                        Dialect dialect, StoreSeams seams) {
        TableNames names = names(options, dialect);
        boolean partitionedByTenant = options.events().isPartitionedByTenant();
        // names are checked here, once, before anything touches a database: a name that does not fit would
        // otherwise fail (or be cut) only when its shard first commits
        options.projections().validate();
        ShardNames.check(options.projections(), partitionedByTenant, options.daemon().getMode(), dialect, names);
        TenantDatabases databases = new TenantDatabases(dataSource, options.tenancy(), partitionedByTenant,
                ownedPools::dataSourceOf);
        DocumentMappings documents = DocumentMappings.of(options, dialect, names);
        boolean ownsSerializer = options.getSerializer() == null;
        JsonSerializer serializer = ownsSerializer ? new JsonbSerializer() : options.getSerializer();
        StoreContext context = new StoreContext(dataSource, dialect, names, dialect.eventSql(names), documents,
                new EventTypes(withArchiveMarkers(options.events().byAlias()), options.events().upcasts()), serializer, seams.transactions(), seams.clock(),
                databases, partitionedByTenant, options.projections().getOutboxPublisher());

        List<String> created = migrate(context, options.isApplyAllDatabaseChangesOnStartup());
        checkServers(context);
        options.daemon().validate();

        List<ProjectionApplier> inline = new ArrayList<>();
        List<ProjectionApplier> async = new ArrayList<>();
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            ProjectionApplier applier = ProjectionApplier.of(registration.projection(), context);
            (registration.lifecycle() == Lifecycle.INLINE ? inline : async).add(applier);
        }
        for (SubscriptionBase subscription : options.projections().subscriptions()) {
            async.add(ProjectionApplier.of(subscription, context));
        }
        for (ProjectionApplier applier : concat(inline, async)) {
            new LinkedHashSet<>(applier.documentMappings(context)).forEach(mapping -> mapping.addWriter(
                    applier.version() > 1 ? applier.name() + " version " + applier.version() : applier.name()));
        }
        markSharedTables(concat(inline, async), context);
        // the daemon's threads read this copy; the caller's settings are sealed against changes from here on
        DaemonSettings settings = options.daemon().sealForStart();
        DaemonSessions sessions = new DaemonSessions();
        VersionReads versionReads = VersionReads.of(options.projections(), context);
        AsyncDaemon daemon = new AsyncDaemon(context, settings, async, options.projections().asyncListeners(),
                seams.executors().apply(Math.max(1, Math.min(settings.getWorkerThreads(),
                        partitionedByTenant ? Integer.MAX_VALUE : async.size()))), seams.retries(), sessions,
                seams.time(), seams.metrics(), versionReads);
        ReplicaReads replicaReads = ReplicaReads.of(options, databases,
                dialect.replicaSql().map(ReplayPositions::of).orElse(null), seams.time(), seams.metrics());
        FerretDocumentStore store = new FerretDocumentStore(context, ownedPools, ownsSerializer, created, inline,
                new StreamAggregates(options.projections().registrations()), daemon,
                options.events().getMetadataSource(), replicaReads, versionReads);
        sessions.bind(store);
        LOG.info("Ferret store on {} (schema {}, prefix {}) with {} document types, {} async and {} inline"
                        + " projections, daemon {}", dialect.engine(), names.schema(), names.prefix(),
                documents.size(), async.size(), inline.size(), settings.getMode());
        if (settings.getMode() != DaemonMode.DISABLED) {
            daemon.start();
        }
        return store;
    }

    /**
     * The schema and table names of a store of {@code options} on {@code dialect}'s engine.
     *
     * @throws ConfigurationException when the schema is a reserved word there
     */
    static TableNames names(StoreOptions options, Dialect dialect) {
        TableNames names = new TableNames(options.getSchema() != null ? options.getSchema() : dialect.defaultSchema(),
                options.getTablePrefix());
        if (dialect.reservedWords().contains(names.schema().toUpperCase(Locale.ROOT))) {
            throw new ConfigurationException("schema '" + names.schema() + "' is a reserved word on "
                    + dialect.engine() + ", and Ferret does not quote names: choose another schema name");
        }
        return names;
    }

    /** Every schema object a store of {@code documents} wants, tables first. */
    static List<SchemaObject> wantedObjects(SchemaSql schemaSql, DocumentMappings documents) {
        List<SchemaObject> wanted = new ArrayList<>(schemaSql.objects());
        wanted.addAll(documents.tables());
        return wanted;
    }

    /** Applies or verifies the schema on every database; returns what was created (prefixed by database name). */
    private static List<String> migrate(StoreContext context, boolean apply) {
        SchemaSql schemaSql = context.dialect().schemaSql(context.names());
        List<SchemaObject> wanted = wantedObjects(schemaSql, context.documents());
        List<String> created = new ArrayList<>();
        TenantDatabases databases = context.databases();
        for (TenantDatabases.Database database : databases.all()) {
            SchemaMigrator migrator = new SchemaMigrator(database.dataSource(), context.dialect(),
                    context.names().schema(), schemaSql.createSchema(), wanted, MIGRATION_LOCK_TIMEOUT);
            if (apply) {
                List<String> here = migrator.apply();
                here.forEach(object -> created.add(database == databases.main() ? object
                        : database.name() + ":" + object));
            } else {
                migrator.verify();
            }
        }
        return List.copyOf(created);
    }

    private static List<ProjectionApplier> concat(List<ProjectionApplier> inline, List<ProjectionApplier> async) {
        List<ProjectionApplier> all = new ArrayList<>(inline);
        all.addAll(async);
        return all;
    }

    /**
     * A table two registrations write (the same document type, or two types stored in one table) has no single
     * writer: no shard may keep its documents between pages, nor insert what it found missing.
     */
    private static void markSharedTables(List<ProjectionApplier> all, StoreContext context) {
        for (ProjectionApplier applier : all) {
            if (applier.documentMappings(context).stream().anyMatch(mapping -> mapping.writers().size() > 1)) {
                applier.sharesItsDocuments();
            }
        }
    }

    /** Reads the server settings the engine needs checked, on every database. */
    private static void checkServers(StoreContext context) {
        if (context.dialect().serverReportSql(context.names()).isEmpty()) {
            return;
        }
        for (TenantDatabases.Database database : context.databases().all()) {
            try (Connection c = database.dataSource().getConnection()) {
                context.dialect().checkServer(c, context.names());
            } catch (SQLException e) {
                throw new DatabaseException("Reading the settings of database " + database.name()
                        + " failed: " + e.getMessage(), e);
            }
        }
    }

    /**
     * The events stream archiving and compacting write: every store reads them, whether or not it archives or
     * compacts.
     */
    private static Map<String, Class<?>> withArchiveMarkers(Map<String, Class<?>> registered) {
        // first, so that they are written under these aliases even when the application registers them too
        Map<String, Class<?>> all = new LinkedHashMap<>();
        all.put(StreamArchived.ALIAS, StreamArchived.class);
        all.put(StreamUnarchived.ALIAS, StreamUnarchived.class);
        all.put(StreamCompacted.ALIAS, StreamCompacted.class);
        registered.forEach(all::putIfAbsent);
        return all;
    }
}
