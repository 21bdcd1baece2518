package dev.ferret.cdi;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentStore;
import dev.ferret.EventMetadataSource;
import dev.ferret.EventUpcast;
import dev.ferret.StoreOptions;
import dev.ferret.TenantResolver;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Projection;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.daemon.DaemonExecutors;
import jakarta.enterprise.concurrent.ManagedExecutorService;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * Builds the store when the application starts (schema apply when configured, daemon start in the configured mode),
 * produces it for injection, and closes it when the application stops (every shard stopped within the
 * stop-and-drain bound, the detector's poll cancelled). Everything the store runs on comes from the container: the
 * data source and the managed executors by JNDI name, transactions through JTA.
 */
@ApplicationScoped
public class FerretStoreLifecycle {

    private static final Logger LOG = Logger.getLogger(FerretStoreLifecycle.class.getName());

    @Inject
    FerretExtension extension;

    @Inject
    JtaTransactions jta;

    @Inject
    Instance<FaultToleranceRetries> faultTolerance;

    /** The application's upcasts: beans, typically producer methods, of type {@link EventUpcast}. */
    @Inject
    Instance<EventUpcast> upcasts;

    /** The application's document indexes: beans, typically producer methods, of type {@link StoreOptions.DocumentIndex}. */
    @Inject
    Instance<StoreOptions.DocumentIndex> documentIndexes;

    /** Published side effects go to the application's observers; the options go to its configuring observers. */
    @Inject
    Event<Object> events;

    /** The application's own source of event metadata, when it has one; the current HTTP request otherwise. */
    @Inject
    Instance<EventMetadataSource> metadataSources;

    /** The application's tenant resolver, when it has one: tenants placed at first use, added while it runs. */
    @Inject
    Instance<TenantResolver> tenantResolvers;

    private volatile DocumentStore store;
    private volatile boolean closed;

    void start(@Observes @Initialized(ApplicationScoped.class) Object event) {
        store();
    }

    void stop(@Observes @BeforeDestroyed(ApplicationScoped.class) Object event) {
        close();
    }

    /** The store, as an application-scoped bean. Do not close it: the application's shutdown does. */
    @Produces
    @ApplicationScoped
    DocumentStore documentStore() {
        return store();
    }

    /** The store, built on first use (normally at application start). */
    public synchronized DocumentStore store() {
        if (closed) {
            throw new IllegalStateException("the Ferret store is closed: the application is stopping");
        }
        if (store == null) {
            store = build();
        }
        return store;
    }

    /** The store if it was built and is open, else null; never builds one. */
    public DocumentStore storeIfStarted() {
        return closed ? null : store;
    }

    /** Whether the store is built and, unless the daemon is disabled, its daemon runs. */
    public boolean ready() {
        DocumentStore s = storeIfStarted();
        if (s == null) {
            return false;
        }
        var status = s.daemon().status();
        return status.mode() == DaemonMode.DISABLED || status.running();
    }

    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (store != null) {
            LOG.info("Stopping the Ferret store and its daemon");
            try {
                store.close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Closing the Ferret store failed", e);
            }
            store = null;
        }
    }

    private DocumentStore build() {
        FerretSettings settings = extension.settings();
        if (!settings.problems().isEmpty()) {
            throw new ConfigurationException(String.join("; ", settings.problems()));
        }
        DataSource dataSource = lookup(settings.dataSource(), DataSource.class, FerretSettings.DATASOURCE.name());
        StoreOptions options = settings.applyTo(new StoreOptions()).dataSource(dataSource);
        if (tenantResolvers.isAmbiguous()) {
            throw new ConfigurationException("the application has several TenantResolver beans; keep one");
        }
        if (tenantResolvers.isResolvable()) {
            options.tenancy().resolver(tenantResolvers.get());
        }
        List<String> tenancyProblems = settings.tenancyProblems(tenantResolvers.isResolvable());
        if (!tenancyProblems.isEmpty()) {
            throw new ConfigurationException(String.join("; ", tenancyProblems));
        }
        if (settings.replicaDataSource() != null) {
            options.replica(lookup(settings.replicaDataSource(), DataSource.class,
                    FerretSettings.REPLICA_DATASOURCE.name()));
        }
        for (FerretSettings.TenancyDatabase database : settings.tenancyDatabases()) {
            options.tenancy().database(database.name(), lookup(database.dataSource(), DataSource.class,
                    FerretSettings.tenancyKey(database.name(), "datasource")), database.tenants().toArray(String[]::new));
            if (database.replicaDataSource() != null) {
                options.tenancy().replica(database.name(), lookup(database.replicaDataSource(), DataSource.class,
                        FerretSettings.tenancyKey(database.name(), "replica-datasource")));
            }
        }
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        for (Map.Entry<String, String> type : settings.eventTypes().entrySet()) {
            try {
                options.events().register(Class.forName(type.getValue(), false, loader), type.getKey());
            } catch (ClassNotFoundException e) {
                throw new ConfigurationException(FerretSettings.EVENT_TYPES.name() + ": no class " + type.getValue()
                        + " (for alias " + type.getKey() + ")");
            }
        }
        int upcastCount = 0;
        for (EventUpcast upcast : upcasts) {
            options.events().upcast(upcast);
            upcastCount++;
        }
        documentIndexes.forEach(options.documents()::index);
        if (metadataSources.isAmbiguous()) {
            throw new ConfigurationException("the application has several EventMetadataSource beans; keep one");
        }
        options.events().metadataSource(metadataSources.isResolvable() ? metadataSources.get()
                : RequestEventMetadata.ifServletApiVisible());
        for (FerretExtension.Registered r : extension.projections()) {
            // so events written before this start read back even before this node appends one of their type
            ProjectionOptions.Registration registration = new ProjectionOptions.Registration(r.projection(),
                    r.lifecycle());
            List<Class<?>> handled = new ArrayList<>(r.eventTypes());
            for (Projection folding : registration.folding()) {
                if (folding instanceof AggregateProjection<?, ?> aggregate) {
                    handled.addAll(aggregate.handledEventTypes());
                } else if (folding instanceof EventProjection free) {
                    handled.addAll(free.handledEventTypes());
                }
            }
            for (Class<?> eventType : handled) {
                if (!options.events().byAlias().containsValue(eventType)
                        && !options.events().byAlias().containsKey(eventType.getSimpleName())) {
                    options.events().register(eventType);
                }
            }
            options.projections().add(r.projection(), r.lifecycle());
        }
        extension.subscriptions().forEach(options.projections()::subscribe);
        options.projections().publishMessages(new CdiOutboxPublisher(events));
        // last word to the application: what MicroProfile Config cannot say (a publisher, a serializer, listeners)
        events.select(StoreOptions.class).fire(options);
        TransactionRunner transactions = settings.transactions() == FerretSettings.Transactions.JDBC
                ? TransactionRunner.JDBC : settings.joinCallersTransaction() ? jta : jta.ownTransactionsOnly();
        StoreSeams seams = StoreSeams.defaults()
                .withTransactions(transactions)
                .withExecutors(workers -> executors(settings, workers))
                .withMetrics(ContainerTelemetry.metrics());
        if (faultTolerance.isResolvable()) {
            seams = seams.withRetries(faultTolerance.get().factory());
        }
        DocumentStore built = Ferret.createStore(options, seams);
        LOG.info("Ferret store started on " + settings.dataSource() + " (" + built.engine() + ", " + transactions
                + (faultTolerance.isResolvable() ? ", MicroProfile Fault Tolerance retries" : ", Resilience4j retries")
                + ", daemon " + options.daemon().getMode() + ", " + extension.projections().size() + " projections, "
                + upcastCount + " event upcasts)");
        return built;
    }

    /**
     * The container's executors: at most {@code workers} daemon tasks on the managed executor at once, and the
     * publisher's calls on it too, outside that bound, so that a hung observer never holds a page loop's slot.
     */
    private static DaemonExecutors executors(FerretSettings settings, int workers) {
        ManagedScheduledExecutorService scheduler = lookup(settings.managedScheduledExecutor(),
                ManagedScheduledExecutorService.class, FerretSettings.MANAGED_SCHEDULED_EXECUTOR.name());
        ManagedExecutorService managed = lookup(settings.managedExecutor(), ManagedExecutorService.class,
                FerretSettings.MANAGED_EXECUTOR.name());
        return new DaemonExecutors(new SerialScheduledExecutor(scheduler),
                new BoundedWorkers(new HintedExecutor(managed, settings.longRunningHint()), workers),
                // publisher calls, and the loop that listens for other nodes' commits (PostgreSQL) for as long as
                // the daemon runs: hinted long-running so that the container does not report it hung
                new HintedExecutor(managed, settings.longRunningHint(), "ferret-outbox-and-commit-listener"), false);
    }

    private static <T> T lookup(String name, Class<T> type, String key) {
        Object found;
        try {
            found = InitialContext.doLookup(name);
        } catch (NamingException e) {
            throw new ConfigurationException(key + "=" + name + ": nothing bound under that JNDI name (" + e + ")");
        }
        if (!type.isInstance(found)) {
            throw new ConfigurationException(key + "=" + name + ": bound object is a " + found.getClass().getName()
                    + ", not a " + type.getName());
        }
        return type.cast(found);
    }
}
