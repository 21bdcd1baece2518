package dev.ferret.cdi;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Every store and daemon setting, read from configuration (MicroProfile Config in a container) under one key each.
 * Plain Java: the keys are parsed here, typed and checked, and every refused value is reported with its key and
 * value; nothing here knows CDI.
 *
 * <table>
 * <caption>keys</caption>
 * <tr><th>key</th><th>type</th><th>default</th></tr>
 * <tr><td>{@value #DATASOURCE}</td><td>JNDI name</td><td>{@value #DEFAULT_DATASOURCE}</td></tr>
 * <tr><td>{@value #TRANSACTIONS}</td><td>{@code jta} | {@code jdbc}</td><td>{@code jta}</td></tr>
 * <tr><td>{@value #MANAGED_EXECUTOR}</td><td>JNDI name</td><td>{@value #DEFAULT_MANAGED_EXECUTOR}</td></tr>
 * <tr><td>{@value #MANAGED_SCHEDULED_EXECUTOR}</td><td>JNDI name</td><td>{@value #DEFAULT_MANAGED_SCHEDULED_EXECUTOR}</td></tr>
 * <tr><td>{@value #LONG_RUNNING_HINT}</td><td>boolean</td><td>true</td></tr>
 * <tr><td>{@value #SCHEMA}</td><td>identifier</td><td>the engine's default schema</td></tr>
 * <tr><td>{@value #TABLE_PREFIX}</td><td>identifier</td><td>{@code pc_}</td></tr>
 * <tr><td>{@value #APPLY_SCHEMA}</td><td>boolean</td><td>false</td></tr>
 * <tr><td>{@value #ENGINE}</td><td>{@code sql_server} | {@code postgresql} | {@code h2}</td><td>detected</td></tr>
 * <tr><td>{@value #EVENT_TYPES}</td><td>comma list of {@code [alias=]class}</td><td>none</td></tr>
 * <tr><td>{@value #PARTITION_BY_TENANT}</td><td>boolean</td><td>false</td></tr>
 * <tr><td>{@value #APPEND_LOCK_TIMEOUT}</td><td>ISO-8601 duration</td><td>{@code PT10S}</td></tr>
 * <tr><td>{@value #TENANCY_DATABASES}</td><td>comma list of database names</td><td>none</td></tr>
 * <tr><td>{@code ferret.tenancy.database.<name>.datasource}</td><td>JNDI name</td><td>required per name</td></tr>
 * <tr><td>{@code ferret.tenancy.database.<name>.tenants}</td><td>comma list of tenant ids</td><td>required per
 * name</td></tr>
 * <tr><td>{@code ferret.daemon.*}, {@code ferret.projections.stop-and-drain-timeout}</td><td colspan="2">see
 * {@link DaemonSettings}: durations are ISO-8601 ({@code PT0.5S}), enums case-insensitive</td></tr>
 * </table>
 */
public final class FerretSettings {

    public static final String PREFIX = "ferret.";
    public static final String DATASOURCE = "ferret.datasource";
    public static final String DEFAULT_DATASOURCE = "java:comp/DefaultDataSource";
    public static final String TRANSACTIONS = "ferret.transactions";
    public static final String MANAGED_EXECUTOR = "ferret.executor.managed-executor";
    public static final String DEFAULT_MANAGED_EXECUTOR = "java:comp/DefaultManagedExecutorService";
    public static final String MANAGED_SCHEDULED_EXECUTOR = "ferret.executor.managed-scheduled-executor";
    public static final String DEFAULT_MANAGED_SCHEDULED_EXECUTOR = "java:comp/DefaultManagedScheduledExecutorService";
    public static final String LONG_RUNNING_HINT = "ferret.executor.long-running-hint";
    public static final String SCHEMA = "ferret.schema";
    public static final String TABLE_PREFIX = "ferret.table-prefix";
    public static final String APPLY_SCHEMA = "ferret.apply-all-database-changes-on-startup";
    public static final String ENGINE = "ferret.engine";
    public static final String EVENT_TYPES = "ferret.events.types";
    public static final String PARTITION_BY_TENANT = "ferret.events.partition-by-tenant";
    public static final String APPEND_LOCK_TIMEOUT = "ferret.events.append-lock-timeout";
    public static final String TENANCY_DATABASES = "ferret.tenancy.databases";
    public static final String WORKER_THREADS = "ferret.daemon.worker-threads";

    public static final String DAEMON_MODE = "ferret.daemon.mode";
    public static final String POLLING_INTERVAL = "ferret.daemon.polling-interval";
    public static final String STALE_SEQUENCE_THRESHOLD = "ferret.daemon.stale-sequence-threshold";
    public static final String APPEND_FENCE_TIMEOUT = "ferret.daemon.append-fence-timeout";
    public static final String FORCED_GAP_SKIP_THRESHOLD = "ferret.daemon.forced-gap-skip-threshold";
    public static final String BATCH_SIZE = "ferret.daemon.batch-size";
    public static final String SKIP_APPLY_ERRORS = "ferret.daemon.skip-apply-errors";
    public static final String MAX_TRANSIENT_RETRIES = "ferret.daemon.max-transient-retries";
    public static final String TRANSIENT_RETRY_BACKOFF = "ferret.daemon.transient-retry-backoff";
    public static final String MAX_RETRY_BACKOFF = "ferret.daemon.max-retry-backoff";
    public static final String STALLED_SHARD_THRESHOLD = "ferret.daemon.stalled-shard-threshold";
    public static final String OUTBOX_RETENTION = "ferret.daemon.outbox-retention";
    public static final String STOP_AND_DRAIN_TIMEOUT = "ferret.projections.stop-and-drain-timeout";
    public static final String MONITORING_INTERVAL = "ferret.daemon.lock.monitoring-interval";
    public static final String TENANT_LOAD_BUDGET = "ferret.daemon.tenant-load-budget";
    public static final String TENANT_LOAD_MEMORY_THRESHOLD = "ferret.daemon.tenant-load-memory-threshold";
    public static final String MAX_CONCURRENT_LOADS = "ferret.daemon.max-concurrent-event-loads";
    public static final String MAX_CONCURRENT_WRITES = "ferret.daemon.max-concurrent-batch-writes";
    public static final String PROBE_TIMEOUT = "ferret.daemon.lock.probe-timeout";
    public static final String LOCK_ACQUIRE_INTERVAL = "ferret.daemon.lock.acquire-interval";

    /** Every key this class reads, in documentation order. */
    public static final List<String> KEYS = List.of(DATASOURCE, TRANSACTIONS, MANAGED_EXECUTOR,
            MANAGED_SCHEDULED_EXECUTOR, LONG_RUNNING_HINT, SCHEMA, TABLE_PREFIX, APPLY_SCHEMA, ENGINE, EVENT_TYPES,
            DAEMON_MODE, POLLING_INTERVAL, STALE_SEQUENCE_THRESHOLD, APPEND_FENCE_TIMEOUT, FORCED_GAP_SKIP_THRESHOLD,
            BATCH_SIZE, SKIP_APPLY_ERRORS, MAX_TRANSIENT_RETRIES, TRANSIENT_RETRY_BACKOFF, MAX_RETRY_BACKOFF,
            STALLED_SHARD_THRESHOLD, OUTBOX_RETENTION, STOP_AND_DRAIN_TIMEOUT, MONITORING_INTERVAL, PROBE_TIMEOUT, LOCK_ACQUIRE_INTERVAL, TENANT_LOAD_BUDGET,
            TENANT_LOAD_MEMORY_THRESHOLD, MAX_CONCURRENT_LOADS, MAX_CONCURRENT_WRITES, PARTITION_BY_TENANT,
            APPEND_LOCK_TIMEOUT, TENANCY_DATABASES, WORKER_THREADS);

    /** The keys of one tenancy database. */
    public static String tenancyKey(String database, String property) {
        return "ferret.tenancy.database." + database + "." + property;
    }

    /**
     * A database tenants live in, before its data source is looked up.
     *
     * @param name       the database's name in the store
     * @param dataSource the JNDI name of its data source
     * @param tenants    the tenants that live there
     */
    public record TenancyDatabase(String name, String dataSource, List<String> tenants) {
    }

    /** How page and unit-of-work transactions are run. */
    public enum Transactions {
        /** JTA on the container's data source (connections enlisted; the container commits). */
        JTA,
        /** Local JDBC commit/rollback, for a non-transactional data source. */
        JDBC
    }

    private final String dataSource;
    private final Transactions transactions;
    private final String managedExecutor;
    private final String managedScheduledExecutor;
    private final boolean longRunningHint;
    private final Map<String, String> eventTypes;
    private final List<TenancyDatabase> tenancyDatabases;
    /** Setter calls on StoreOptions, replayed for every options object built. */
    private final List<Consumer<StoreOptions>> options;
    private final List<String> problems;

    private FerretSettings(Builder b) {
        this.dataSource = b.dataSource;
        this.transactions = b.transactions;
        this.managedExecutor = b.managedExecutor;
        this.managedScheduledExecutor = b.managedScheduledExecutor;
        this.longRunningHint = b.longRunningHint;
        this.eventTypes = Collections.unmodifiableMap(b.eventTypes);
        this.tenancyDatabases = List.copyOf(b.tenancyDatabases);
        this.options = List.copyOf(b.options);
        this.problems = List.copyOf(b.problems);
    }

    /**
     * Reads every key through {@code lookup} (a missing key gives an empty value). Never throws on bad values:
     * each one is recorded in {@link #problems()}, naming its key and value.
     */
    public static FerretSettings read(Function<String, Optional<String>> lookup) {
        Builder b = new Builder(lookup);
        b.dataSource = b.string(DATASOURCE).orElse(DEFAULT_DATASOURCE);
        b.transactions = b.enumValue(TRANSACTIONS, Transactions.class).orElse(Transactions.JTA);
        b.managedExecutor = b.string(MANAGED_EXECUTOR).orElse(DEFAULT_MANAGED_EXECUTOR);
        b.managedScheduledExecutor = b.string(MANAGED_SCHEDULED_EXECUTOR).orElse(DEFAULT_MANAGED_SCHEDULED_EXECUTOR);
        b.longRunningHint = b.bool(LONG_RUNNING_HINT).orElse(true);

        b.string(SCHEMA).ifPresent(v -> b.option(SCHEMA, v, o -> o.schema(v)));
        b.string(TABLE_PREFIX).ifPresent(v -> b.option(TABLE_PREFIX, v, o -> o.tablePrefix(v)));
        b.bool(APPLY_SCHEMA).ifPresent(v -> b.option(APPLY_SCHEMA, v, o -> o.applyAllDatabaseChangesOnStartup(v)));
        b.enumValue(ENGINE, DatabaseEngine.class).ifPresent(v -> b.option(ENGINE, v, o -> o.engine(v)));
        b.string(EVENT_TYPES).ifPresent(b::eventTypes);
        b.bool(PARTITION_BY_TENANT).ifPresent(v -> b.option(PARTITION_BY_TENANT, v, o -> o.events().partitionByTenant(v)));
        b.duration(APPEND_LOCK_TIMEOUT)
                .ifPresent(v -> b.option(APPEND_LOCK_TIMEOUT, v, o -> o.events().appendLockTimeout(v)));
        b.string(TENANCY_DATABASES).ifPresent(b::tenancyDatabases);
        b.integer(WORKER_THREADS).ifPresent(v -> b.daemon(WORKER_THREADS, v, d -> d.workerThreads(v)));

        b.enumValue(DAEMON_MODE, DaemonMode.class).ifPresent(v -> b.daemon(DAEMON_MODE, v, d -> d.mode(v)));
        b.duration(MONITORING_INTERVAL)
                .ifPresent(v -> b.daemon(MONITORING_INTERVAL, v, d -> d.monitoringInterval(v)));
        b.duration(PROBE_TIMEOUT).ifPresent(v -> b.daemon(PROBE_TIMEOUT, v, d -> d.probeTimeout(v)));
        b.duration(LOCK_ACQUIRE_INTERVAL)
                .ifPresent(v -> b.daemon(LOCK_ACQUIRE_INTERVAL, v, d -> d.lockAcquireInterval(v)));
        b.integer(TENANT_LOAD_BUDGET).ifPresent(v -> b.daemon(TENANT_LOAD_BUDGET, v, d -> d.tenantLoadBudget(v)));
        b.decimal(TENANT_LOAD_MEMORY_THRESHOLD).ifPresent(v -> b.daemon(TENANT_LOAD_MEMORY_THRESHOLD, v,
                d -> d.tenantLoadMemoryThreshold(v)));
        b.integer(MAX_CONCURRENT_LOADS)
                .ifPresent(v -> b.daemon(MAX_CONCURRENT_LOADS, v, d -> d.maxConcurrentEventLoadsPerDatabase(v)));
        b.integer(MAX_CONCURRENT_WRITES)
                .ifPresent(v -> b.daemon(MAX_CONCURRENT_WRITES, v, d -> d.maxConcurrentBatchWritesPerDatabase(v)));
        b.duration(POLLING_INTERVAL).ifPresent(v -> b.daemon(POLLING_INTERVAL, v, d -> d.pollingInterval(v)));
        b.duration(STALE_SEQUENCE_THRESHOLD)
                .ifPresent(v -> b.daemon(STALE_SEQUENCE_THRESHOLD, v, d -> d.staleSequenceThreshold(v)));
        b.duration(APPEND_FENCE_TIMEOUT)
                .ifPresent(v -> b.daemon(APPEND_FENCE_TIMEOUT, v, d -> d.appendFenceTimeout(v)));
        b.duration(FORCED_GAP_SKIP_THRESHOLD)
                .ifPresent(v -> b.daemon(FORCED_GAP_SKIP_THRESHOLD, v, d -> d.forcedGapSkipThreshold(v)));
        b.integer(BATCH_SIZE).ifPresent(v -> b.daemon(BATCH_SIZE, v, d -> d.batchSize(v)));
        b.bool(SKIP_APPLY_ERRORS).ifPresent(v -> b.daemon(SKIP_APPLY_ERRORS, v, d -> d.skipApplyErrors(v)));
        b.integer(MAX_TRANSIENT_RETRIES)
                .ifPresent(v -> b.daemon(MAX_TRANSIENT_RETRIES, v, d -> d.maxTransientRetries(v)));
        b.duration(TRANSIENT_RETRY_BACKOFF)
                .ifPresent(v -> b.daemon(TRANSIENT_RETRY_BACKOFF, v, d -> d.transientRetryBackoff(v)));
        b.duration(MAX_RETRY_BACKOFF).ifPresent(v -> b.daemon(MAX_RETRY_BACKOFF, v, d -> d.maxRetryBackoff(v)));
        b.duration(STALLED_SHARD_THRESHOLD).ifPresent(v -> b.daemon(STALLED_SHARD_THRESHOLD, v,
                d -> d.stalledShardThreshold(v)));
        b.duration(OUTBOX_RETENTION).ifPresent(v -> b.daemon(OUTBOX_RETENTION, v, d -> d.outboxRetention(v)));
        b.duration(STOP_AND_DRAIN_TIMEOUT)
                .ifPresent(v -> b.daemon(STOP_AND_DRAIN_TIMEOUT, v, d -> d.stopAndDrainTimeout(v)));

        // settings that are each valid but disagree with one another
        if (b.problems.isEmpty()) {
            StoreOptions probe = new StoreOptions();
            b.options.forEach(o -> o.accept(probe));
            try {
                probe.daemon().validate();
            } catch (ConfigurationException e) {
                b.problems.add("Ferret configuration: " + e.getMessage()
                        .replaceAll("(?<![\\w.-])(daemon|projections)\\.", PREFIX + "$1."));
            }
            if (!b.tenancyDatabases.isEmpty() && !probe.events().isPartitionedByTenant()) {
                b.problems.add("Ferret configuration: " + TENANCY_DATABASES + " needs " + PARTITION_BY_TENANT
                        + "=true: each database numbers its own event log");
            }
        }
        return new FerretSettings(b);
    }

    /** Applies every configured store and daemon setting to {@code target}. */
    public StoreOptions applyTo(StoreOptions target) {
        options.forEach(o -> o.accept(target));
        return target;
    }

    /** The values refused, one message each, naming key and value; empty when the configuration is valid. */
    public List<String> problems() {
        return problems;
    }

    public String dataSource() {
        return dataSource;
    }

    public Transactions transactions() {
        return transactions;
    }

    public String managedExecutor() {
        return managedExecutor;
    }

    public String managedScheduledExecutor() {
        return managedScheduledExecutor;
    }

    public boolean longRunningHint() {
        return longRunningHint;
    }

    /** The databases tenants are mapped to, from {@value #TENANCY_DATABASES}. */
    public List<TenancyDatabase> tenancyDatabases() {
        return tenancyDatabases;
    }

    /** Event class names by alias, from {@value #EVENT_TYPES}. */
    public Map<String, String> eventTypes() {
        return eventTypes;
    }

    private static final class Builder {
        private final Function<String, Optional<String>> lookup;
        private final List<String> problems = new ArrayList<>();
        private final List<Consumer<StoreOptions>> options = new ArrayList<>();
        private final Map<String, String> eventTypes = new LinkedHashMap<>();
        private final List<TenancyDatabase> tenancyDatabases = new ArrayList<>();
        private final StoreOptions probe = new StoreOptions();
        private String dataSource;
        private Transactions transactions;
        private String managedExecutor;
        private String managedScheduledExecutor;
        private boolean longRunningHint;

        Builder(Function<String, Optional<String>> lookup) {
            this.lookup = lookup;
        }

        private void refuse(String key, String value, String why) {
            problems.add("Ferret configuration: " + key + "=" + value + " is refused: " + why);
        }

        Optional<String> string(String key) {
            return lookup.apply(key).map(String::trim).filter(s -> !s.isEmpty());
        }

        Optional<Boolean> bool(String key) {
            Optional<String> raw = string(key);
            if (raw.isEmpty()) {
                return Optional.empty();
            }
            String v = raw.get().toLowerCase(Locale.ROOT);
            if (v.equals("true") || v.equals("false")) {
                return Optional.of(Boolean.valueOf(v));
            }
            refuse(key, raw.get(), "expected true or false");
            return Optional.empty();
        }

        Optional<Integer> integer(String key) {
            Optional<String> raw = string(key);
            try {
                return raw.map(Integer::valueOf);
            } catch (NumberFormatException e) {
                refuse(key, raw.get(), "expected a whole number");
                return Optional.empty();
            }
        }

        Optional<Double> decimal(String key) {
            Optional<String> raw = string(key);
            try {
                return raw.map(Double::valueOf);
            } catch (NumberFormatException e) {
                refuse(key, raw.get(), "expected a number such as 0.9");
                return Optional.empty();
            }
        }

        Optional<Duration> duration(String key) {
            Optional<String> raw = string(key);
            try {
                return raw.map(Duration::parse);
            } catch (DateTimeParseException e) {
                refuse(key, raw.get(), "expected an ISO-8601 duration such as PT0.5S, PT5S or PT2M");
                return Optional.empty();
            }
        }

        <E extends Enum<E>> Optional<E> enumValue(String key, Class<E> type) {
            Optional<String> raw = string(key);
            if (raw.isEmpty()) {
                return Optional.empty();
            }
            String wanted = raw.get().replace('-', '_');
            for (E constant : type.getEnumConstants()) {
                if (constant.name().equalsIgnoreCase(wanted)) {
                    return Optional.of(constant);
                }
            }
            List<String> allowed = new ArrayList<>();
            for (E constant : type.getEnumConstants()) {
                allowed.add(constant.name());
            }
            refuse(key, raw.get(), "expected one of " + allowed + " (case-insensitive)");
            return Optional.empty();
        }

        /** Records a StoreOptions setter, trying it once now so a refused value is reported with its key. */
        void option(String key, Object value, Consumer<StoreOptions> setter) {
            try {
                setter.accept(probe);
                options.add(setter);
            } catch (ConfigurationException | IllegalArgumentException e) {
                refuse(key, String.valueOf(value), e.getMessage());
            }
        }

        void daemon(String key, Object value, Consumer<DaemonSettings> setter) {
            option(key, value, o -> setter.accept(o.daemon()));
        }

        /** Reads each named database's keys and checks the mapping on the probe, so problems name their keys. */
        void tenancyDatabases(String list) {
            javax.sql.DataSource unused = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                    FerretSettings.class.getClassLoader(), new Class<?>[] {javax.sql.DataSource.class},
                    (proxy, method, args) -> {
                        throw new UnsupportedOperationException("configuration probe");
                    });
            for (String entry : list.split(",")) {
                String name = entry.trim();
                if (name.isEmpty()) {
                    continue;
                }
                String dataSourceKey = tenancyKey(name, "datasource");
                String tenantsKey = tenancyKey(name, "tenants");
                Optional<String> jndi = string(dataSourceKey);
                List<String> tenants = string(tenantsKey).stream().flatMap(t -> java.util.Arrays.stream(t.split(",")))
                        .map(String::trim).filter(t -> !t.isEmpty()).toList();
                if (jndi.isEmpty()) {
                    refuse(TENANCY_DATABASES, list, "database '" + name + "' needs " + dataSourceKey
                            + " (the JNDI name of its data source)");
                    continue;
                }
                try {
                    probe.tenancy().database(name, unused, tenants.toArray(String[]::new));
                    tenancyDatabases.add(new TenancyDatabase(name, jndi.get(), tenants));
                } catch (ConfigurationException e) {
                    refuse(tenants.isEmpty() ? tenantsKey : TENANCY_DATABASES, tenants.isEmpty() ? "" : list,
                            e.getMessage());
                }
            }
        }

        void eventTypes(String list) {
            for (String entry : list.split(",")) {
                String item = entry.trim();
                if (item.isEmpty()) {
                    continue;
                }
                int eq = item.indexOf('=');
                String className = eq < 0 ? item : item.substring(eq + 1).trim();
                String alias = eq < 0 ? className.substring(className.lastIndexOf('.') + 1) : item.substring(0, eq).trim();
                if (alias.isEmpty() || className.isEmpty()) {
                    refuse(EVENT_TYPES, list, "entry '" + item + "' must be a class name or alias=class name");
                } else {
                    eventTypes.put(alias, className);
                }
            }
        }
    }
}
