package dev.ferret.cdi;

import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.Setting;
import dev.ferret.runtime.query.EditDistance;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Every store and daemon setting, read from configuration (MicroProfile Config in a container) under one key each.
 * Plain Java: the keys are parsed here, typed and checked, and every refused value is reported with its key and
 * value; nothing here knows CDI.
 *
 * <p>Each key is declared once. The daemon's come from {@link DaemonSettings#settings()} ({@value #PREFIX} + the
 * setting's key): their parsing, validation and messages follow from the declaration, with no line here per
 * setting. The store's and the container's own keys are the {@link Key} constants below. The README's key table is
 * tested against both, so it cannot drift; durations are ISO-8601 ({@code PT0.5S}), enums case-insensitive.
 */
public final class FerretSettings {

    public static final String PREFIX = "ferret.";
    public static final String DEFAULT_DATASOURCE = "java:comp/DefaultDataSource";
    public static final String DEFAULT_MANAGED_EXECUTOR = "java:comp/DefaultManagedExecutorService";
    public static final String DEFAULT_MANAGED_SCHEDULED_EXECUTOR = "java:comp/DefaultManagedScheduledExecutorService";

    /**
     * A key read besides the daemon settings, declared once with its README row.
     *
     * @param name         the full key
     * @param values       the values it takes (Markdown)
     * @param defaultValue its value when unset, as the README shows it (Markdown)
     */
    public record Key(String name, String values, String defaultValue) {

        @Override
        public String toString() {
            return name;
        }
    }

    private static final List<Key> DECLARED = new ArrayList<>();

    public static final Key DATASOURCE = key("ferret.datasource", "JNDI name", "`" + DEFAULT_DATASOURCE + "`");
    public static final Key REPLICA_DATASOURCE = key("ferret.replica-datasource",
            "JNDI name of a read replica of `ferret.datasource`: query sessions read there, non-stale reads only"
                    + " once it is proven caught up", "none");
    public static final Key REPLICA_CATCH_UP_TIMEOUT = key("ferret.replica-catch-up-timeout",
            "a duration of zero or more: how long a non-stale read waits for a replica to catch up (PostgreSQL)"
                    + " before it reads the primary", "`PT1S`");
    public static final Key TRANSACTIONS = key("ferret.transactions", "`jta` \\| `jdbc`",
            "`jta` (`jdbc` for a non-transactional data source)");
    public static final Key JOIN_CALLERS_TRANSACTION = key("ferret.transactions.join-callers-transaction",
            "boolean", "`true`: `saveChanges()` joins an active JTA transaction (`false`: its own, as before)");
    public static final Key MANAGED_EXECUTOR = key("ferret.executor.managed-executor", "JNDI name",
            "`" + DEFAULT_MANAGED_EXECUTOR + "`");
    public static final Key MANAGED_SCHEDULED_EXECUTOR = key("ferret.executor.managed-scheduled-executor",
            "JNDI name", "`" + DEFAULT_MANAGED_SCHEDULED_EXECUTOR + "`");
    public static final Key LONG_RUNNING_HINT = key("ferret.executor.long-running-hint", "boolean", "`true`");
    public static final Key SCHEMA = key("ferret.schema", "identifier", "the engine's default schema");
    public static final Key TABLE_PREFIX = key("ferret.table-prefix", "identifier", "`pc_`");
    public static final Key APPLY_SCHEMA = key("ferret.apply-all-database-changes-on-startup", "boolean", "`false`");
    public static final Key ENGINE = key("ferret.engine", "`sql_server` \\| `postgresql` \\| `h2`", "detected");
    public static final Key EVENT_TYPES = key("ferret.events.types",
            "comma list of `[alias=]fully.qualified.Class`", "none");
    public static final Key PARTITION_BY_TENANT = key("ferret.events.partition-by-tenant",
            "boolean: a sequence, a mark and one shard per projection for each tenant", "`false`");
    public static final Key APPEND_LOCK_TIMEOUT = key("ferret.events.append-lock-timeout",
            "a positive duration: how long an append waits on H2 for another append of its tenant", "`PT10S`");
    public static final Key TENANCY_DATABASES = key("ferret.tenancy.databases",
            "comma list of database names (needs `ferret.events.partition-by-tenant=true`)", "none");
    public static final Key TENANCY_DATASOURCE = key(tenancyKey("<name>", "datasource"),
            "JNDI name of that database's data source", "required per name");
    public static final Key TENANCY_REPLICA_DATASOURCE = key(tenancyKey("<name>", "replica-datasource"),
            "JNDI name of a read replica of that database", "none");
    public static final Key TENANCY_TENANTS = key(tenancyKey("<name>", "tenants"),
            "comma list of the tenant ids that live there",
            "required per name, unless a `TenantResolver` bean places tenants");

    public static final Key CONSOLE_ENABLED = key("ferret.console.enabled",
            "boolean: serve the operator's console and its JSON actions in the application", "`false`");
    public static final Key CONSOLE_PATH = key("ferret.console.path",
            "path within the application, such as `/ferret-console`", "`/ferret-console`");
    public static final Key CONSOLE_OPERATOR_ROLE = key("ferret.console.operator-role",
            "role name: sees the console and runs its actions", "`ferret-operator`");
    public static final Key CONSOLE_VIEWER_ROLE = key("ferret.console.viewer-role",
            "role name: sees the console, runs nothing", "`ferret-viewer`");
    public static final Key CONSOLE_TRANSPORT_GUARANTEE = key("ferret.console.transport-guarantee",
            "`confidential` (HTTPS only) \\| `none`", "`confidential`");

    /** Every key this class reads, in documentation order: its own, then the daemon's. */
    public static final List<Key> KEYS = keys();

    private static Key key(String name, String values, String defaultValue) {
        Key key = new Key(name, values, defaultValue);
        DECLARED.add(key);
        return key;
    }

    private static List<Key> keys() {
        List<Key> keys = new ArrayList<>(DECLARED);
        for (Setting<?> setting : DaemonSettings.settings()) {
            keys.add(new Key(PREFIX + setting.key(), setting.values(), "`" + setting.defaultValue() + "`"));
        }
        return List.copyOf(keys);
    }

    /** The keys of one tenancy database. */
    public static String tenancyKey(String database, String property) {
        return "ferret.tenancy.database." + database + "." + property;
    }

    /**
     * A database tenants live in, before its data sources are looked up.
     *
     * @param name              the database's name in the store
     * @param dataSource        the JNDI name of its data source
     * @param tenants           the tenants that live there
     * @param replicaDataSource the JNDI name of its read replica's data source, or null
     */
    public record TenancyDatabase(String name, String dataSource, List<String> tenants, String replicaDataSource) {

        /** A database without a read replica. */
        public TenancyDatabase(String name, String dataSource, List<String> tenants) {
            this(name, dataSource, tenants, null);
        }
    }

    /** How page and unit-of-work transactions are run. */
    public enum Transactions {
        /** JTA on the container's data source (connections enlisted; the container commits). */
        JTA,
        /** Local JDBC commit/rollback, for a non-transactional data source. */
        JDBC
    }

    private final String dataSource;
    private final String replicaDataSource;
    private final Transactions transactions;
    private final boolean joinCallersTransaction;
    private final String managedExecutor;
    private final String managedScheduledExecutor;
    private final boolean longRunningHint;
    private final Map<String, String> eventTypes;
    private final List<TenancyDatabase> tenancyDatabases;
    /** Setter calls on StoreOptions, replayed for every options object built. */
    private final List<Consumer<StoreOptions>> options;
    private final List<String> problems;

    private FerretSettings(SettingsReader b) {
        this.dataSource = b.dataSource;
        this.replicaDataSource = b.replicaDataSource;
        this.transactions = b.transactions;
        this.joinCallersTransaction = b.joinCallersTransaction;
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
        SettingsReader b = new SettingsReader(lookup);
        b.dataSource = b.string(DATASOURCE.name()).orElse(DEFAULT_DATASOURCE);
        b.replicaDataSource = b.string(REPLICA_DATASOURCE.name()).orElse(null);
        if (b.dataSource.equals(b.replicaDataSource)) {
            b.problems.add("Ferret configuration: " + REPLICA_DATASOURCE + "=" + b.replicaDataSource + " is refused:"
                    + " it names the primary's own data source (" + DATASOURCE + "); name a standby's, or none");
        }
        b.duration(REPLICA_CATCH_UP_TIMEOUT.name()).ifPresent(v -> b.option(REPLICA_CATCH_UP_TIMEOUT, v,
                o -> o.replicaCatchUpTimeout(v)));
        b.transactions = b.enumValue(TRANSACTIONS.name(), Transactions.class).orElse(Transactions.JTA);
        b.joinCallersTransaction = b.bool(JOIN_CALLERS_TRANSACTION.name()).orElse(true);
        b.managedExecutor = b.string(MANAGED_EXECUTOR.name()).orElse(DEFAULT_MANAGED_EXECUTOR);
        b.managedScheduledExecutor = b.string(MANAGED_SCHEDULED_EXECUTOR.name())
                .orElse(DEFAULT_MANAGED_SCHEDULED_EXECUTOR);
        b.longRunningHint = b.bool(LONG_RUNNING_HINT.name()).orElse(true);

        b.string(SCHEMA.name()).ifPresent(v -> b.option(SCHEMA, v, o -> o.schema(v)));
        b.string(TABLE_PREFIX.name()).ifPresent(v -> b.option(TABLE_PREFIX, v, o -> o.tablePrefix(v)));
        b.bool(APPLY_SCHEMA.name())
                .ifPresent(v -> b.option(APPLY_SCHEMA, v, o -> o.applyAllDatabaseChangesOnStartup(v)));
        b.enumValue(ENGINE.name(), DatabaseEngine.class).ifPresent(v -> b.option(ENGINE, v, o -> o.engine(v)));
        b.string(EVENT_TYPES.name()).ifPresent(b::eventTypes);
        b.bool(PARTITION_BY_TENANT.name())
                .ifPresent(v -> b.option(PARTITION_BY_TENANT, v, o -> o.events().partitionByTenant(v)));
        b.duration(APPEND_LOCK_TIMEOUT.name())
                .ifPresent(v -> b.option(APPEND_LOCK_TIMEOUT, v, o -> o.events().appendLockTimeout(v)));
        b.string(TENANCY_DATABASES.name()).ifPresent(b::tenancyDatabases);
        DaemonSettings.settings().forEach(b::daemon);

        // settings that are each valid but disagree with one another
        if (b.problems.isEmpty()) {
            StoreOptions probe = new StoreOptions();
            b.options.forEach(o -> o.accept(probe));
            probe.daemon().problems(PREFIX).forEach(p -> b.problems.add("Ferret configuration: " + p));
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

    /** The JNDI name of the read replica of {@link #dataSource()}, or null when query sessions read the primary. */
    public String replicaDataSource() {
        return replicaDataSource;
    }

    public Transactions transactions() {
        return transactions;
    }

    /** Whether a unit of work joins the JTA transaction active on the calling thread. */
    public boolean joinCallersTransaction() {
        return joinCallersTransaction;
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

    /** The databases tenants are mapped to, from {@code ferret.tenancy.databases}. */
    public List<TenancyDatabase> tenancyDatabases() {
        return tenancyDatabases;
    }

    /**
     * What is wrong with the tenancy databases once it is known whether the application has a {@code TenantResolver}
     * bean: a database that lists no tenant needs one to place tenants there.
     */
    public List<String> tenancyProblems(boolean resolver) {
        List<String> found = new ArrayList<>();
        for (TenancyDatabase database : tenancyDatabases) {
            if (database.tenants().isEmpty() && !resolver) {
                found.add("Ferret configuration: " + tenancyKey(database.name(), "tenants") + " is empty and no"
                        + " TenantResolver bean places tenants in database '" + database.name() + "': list its"
                        + " tenants or add one");
            }
        }
        return found;
    }

    /** Event class names by alias, from {@code ferret.events.types}. */
    public Map<String, String> eventTypes() {
        return eventTypes;
    }

    /**
     * The names among {@code names} that start with {@value #PREFIX} but that no setting reads, each followed by the
     * nearest key when one is close: a mistyped key would otherwise be ignored without a word.
     */
    /** Keys that are still read, so configurations that set them start, but no longer change anything. */
    private static final List<String> WITHOUT_EFFECT = List.of(PREFIX + DaemonSettings.APPEND_FENCE_TIMEOUT.key());

    /**
     * The deployment's warnings about {@code names} (the configured keys): each key that no longer has an effect,
     * named with why, so that a configuration never keeps a setting that silently does nothing.
     */
    public static List<String> keysWithoutEffect(Iterable<String> names) {
        List<String> warnings = new ArrayList<>();
        for (String name : names) {
            if (WITHOUT_EFFECT.contains(name)) {
                warnings.add("Ferret configuration: " + name + " has no effect any more (appends fence nothing:"
                        + " holes are resolved by their owners); remove it");
            }
        }
        return warnings;
    }

    public List<String> unknownKeys(Iterable<String> names) {
        Set<String> known = new TreeSet<>();
        KEYS.stream().map(Key::name).filter(k -> !k.contains("<")).forEach(known::add);
        for (TenancyDatabase database : tenancyDatabases) {
            known.add(tenancyKey(database.name(), "datasource"));
            known.add(tenancyKey(database.name(), "tenants"));
            known.add(tenancyKey(database.name(), "replica-datasource"));
        }
        Set<String> unknown = new TreeSet<>();
        for (String name : names) {
            if (name.startsWith(PREFIX) && !known.contains(name)) {
                unknown.add(name);
            }
        }
        List<String> described = new ArrayList<>();
        for (String name : unknown) {
            String nearest = null;
            int best = 4; // more edits than this is another word, not a typo
            for (String key : known) {
                int distance = EditDistance.between(name, key);
                if (distance < best) {
                    best = distance;
                    nearest = key;
                }
            }
            described.add(nearest == null ? name : name + " (did you mean " + nearest + "?)");
        }
        return described;
    }
}
