package dev.ferret;

import jakarta.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Everything a {@link DocumentStore} is built from. Mutable while configuring, then handed to the runtime, which
 * copies what it needs; the {@link #daemon() daemon settings} are copied and then sealed, so changing one after the
 * store started fails instead of silently doing nothing. Every setter validates its argument and throws
 * {@link ConfigurationException} naming the setting and the value it refused.
 */
public final class StoreOptions {

    /** The tenant sessions belong to when none is named. */
    public static final String DEFAULT_TENANT = "*DEFAULT*";

    /** The default of {@link Events#appendLockTimeout}. */
    public static final Duration DEFAULT_APPEND_LOCK_TIMEOUT = Duration.ofSeconds(10);

    /** The default of {@link #replicaCatchUpTimeout}. */
    public static final Duration DEFAULT_REPLICA_CATCH_UP_TIMEOUT = Duration.ofSeconds(1);

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private DataSource dataSource;
    private DataSource replica;
    private Duration replicaCatchUpTimeout = DEFAULT_REPLICA_CATCH_UP_TIMEOUT;
    private String connectionUrl;
    private String username;
    private String password;
    private int connectionBudget;
    private DatabaseEngine engine;
    private String schema;
    private String tablePrefix = "pc_";
    private boolean applyAllDatabaseChangesOnStartup;
    private JsonSerializer serializer;
    private final Events events = new Events(this);
    private final Documents documents = new Documents(this);
    private final dev.ferret.projections.ProjectionOptions projections = new dev.ferret.projections.ProjectionOptions();
    private final dev.ferret.daemon.DaemonSettings daemon = new dev.ferret.daemon.DaemonSettings();
    private final Tenancy tenancy = new Tenancy(this);

    /** Uses an existing, ideally pooled, {@code DataSource}; it is not closed with the store. */
    public StoreOptions dataSource(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        return this;
    }

    /**
     * A read replica of the store's own database: {@linkplain DocumentStore#querySession query sessions} read
     * documents, queries and events from it, while units of work, the async daemon, schema apply and progression
     * stay on the primary. A read that asked for non-stale data reads the replica only when it is proven caught up
     * (on PostgreSQL: its replay position has passed the primary's WAL position after the wait, waited for up to
     * {@link #replicaCatchUpTimeout}); elsewhere such reads go to the primary. The data source is the application's
     * and is not closed with the store, nor counted in the {@link #connectionBudget}.
     *
     * @throws ConfigurationException when it is the store's own {@link #dataSource data source}
     */
    public StoreOptions replica(DataSource replicaDataSource) {
        Objects.requireNonNull(replicaDataSource, "replica of tenancy database " + DEFAULT_DATABASE);
        if (replicaDataSource == dataSource) {
            throw new ConfigurationException("the replica of database '" + DEFAULT_DATABASE + "' is its primary"
                    + " data source; pass the data source of a standby, or no replica");
        }
        this.replica = replicaDataSource;
        return this;
    }

    /**
     * How long a read that asked for non-stale data waits for a replica to replay up to the primary's position
     * before it reads the primary instead; default 1 s. Zero checks once and never waits. Only PostgreSQL reports
     * the positions; elsewhere such reads go to the primary at once.
     *
     * @throws ConfigurationException when negative or null
     */
    public StoreOptions replicaCatchUpTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new ConfigurationException("replicaCatchUpTimeout must be zero or a positive duration, was: "
                    + timeout);
        }
        this.replicaCatchUpTimeout = timeout;
        return this;
    }

    /**
     * Connects through a JDBC URL with a pool the store owns. Without a data source or a URL the store uses an
     * embedded in-memory H2 database.
     */
    public StoreOptions connection(String jdbcUrl, String username, String password) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:")) {
            throw new ConfigurationException("connection url must start with 'jdbc:', was: " + redact(jdbcUrl));
        }
        this.connectionUrl = jdbcUrl;
        this.username = username;
        this.password = password;
        return this;
    }

    /**
     * How many connections, at most, the pools Ferret opens on this node hold together: the store's own when it is
     * given a {@link #connection URL}, and each tenancy database given by {@link Tenancy#database(String, String,
     * String...) URL}. Each of those pools gets what the daemon needs on its database (with {@code workerThreads}
     * W: W + 2 on the store's own, + 1 on PostgreSQL with {@code commitSignals} on; min(W, the sum of the two
     * per-database caps when both are set) + 1 on each other one) plus an even share of the rest for the
     * application's sessions, the store's own database first when the rest does not divide evenly. 0 (the default)
     * sets no budget: each of those pools gets its need plus 4. Data sources the application passes are its own and
     * outside the budget; the guide (tenancy, Connections) gives the same formula to size them.
     *
     * @throws ConfigurationException when negative; {@code createStore} fails when the budget is below what the
     *                                pools need together, naming what each needs
     */
    public StoreOptions connectionBudget(int connections) {
        if (connections < 0) {
            throw new ConfigurationException("connectionBudget must be 0 (no budget) or a number of connections,"
                    + " was: " + connections);
        }
        this.connectionBudget = connections;
        return this;
    }

    /** Forces the dialect instead of detecting it from the connection's metadata. */
    public StoreOptions engine(DatabaseEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
        return this;
    }

    /** The database schema all tables live in; default: the engine's default schema (dbo, public, PUBLIC). */
    public StoreOptions schema(String schema) {
        this.schema = requireIdentifier("schema", schema);
        return this;
    }

    /** Prefix of every table name; default {@code pc_}. */
    public StoreOptions tablePrefix(String tablePrefix) {
        this.tablePrefix = requireIdentifier("tablePrefix", tablePrefix);
        return this;
    }

    /**
     * When true, the store creates every missing table, index and function at startup, serialized across nodes by
     * a database lock. When false (the default) it only checks that they exist.
     */
    public StoreOptions applyAllDatabaseChangesOnStartup(boolean apply) {
        this.applyAllDatabaseChangesOnStartup = apply;
        return this;
    }

    /** Replaces the JSON-B based default serializer. */
    public StoreOptions serializer(JsonSerializer serializer) {
        this.serializer = Objects.requireNonNull(serializer, "serializer");
        return this;
    }

    /** Event type registrations. */
    public Events events() {
        return events;
    }

    /** Document type registrations. */
    public Documents documents() {
        return documents;
    }

    /** Projections and async listeners. */
    public dev.ferret.projections.ProjectionOptions projections() {
        return projections;
    }

    /** Where tenants live: the store's own database unless mapped to another. */
    public Tenancy tenancy() {
        return tenancy;
    }

    /** The async daemon's mode and settings. */
    public dev.ferret.daemon.DaemonSettings daemon() {
        return daemon;
    }

    public DataSource getDataSource() {
        return dataSource;
    }

    /** The read replica of the store's own database, or null. */
    public DataSource getReplica() {
        return replica;
    }

    /** See {@link #replicaCatchUpTimeout}. */
    public Duration getReplicaCatchUpTimeout() {
        return replicaCatchUpTimeout;
    }

    public String getConnectionUrl() {
        return connectionUrl;
    }

    public String getUsername() {
        return username;
    }

    public String getPassword() {
        return password;
    }

    /** See {@link #connectionBudget}; 0 when unset. */
    public int getConnectionBudget() {
        return connectionBudget;
    }

    public DatabaseEngine getEngine() {
        return engine;
    }

    public String getSchema() {
        return schema;
    }

    public String getTablePrefix() {
        return tablePrefix;
    }

    public boolean isApplyAllDatabaseChangesOnStartup() {
        return applyAllDatabaseChangesOnStartup;
    }

    public JsonSerializer getSerializer() {
        return serializer;
    }

    /**
     * Checks {@code value} is a plain SQL identifier (a letter or underscore, then letters, digits or
     * underscores, at most 63 characters), because identifiers cannot be bound as parameters.
     *
     * @throws ConfigurationException naming {@code setting} and the value otherwise
     */
    public static String requireIdentifier(String setting, String value) {
        if (value == null || !IDENTIFIER.matcher(value).matches()) {
            throw new ConfigurationException(setting + " must be a plain identifier matching "
                    + IDENTIFIER.pattern() + ", was: " + (value == null ? "null" : "'" + value + "'"));
        }
        return value;
    }

    /**
     * {@code url} with every secret it carries replaced by {@code ***}, for messages and logs: the value of each key
     * that names a password, a secret, a token or a credential ({@code password}, {@code pwd},
     * {@code trustStorePassword}, {@code accessToken}, {@code clientSecret}, ...), a value in SQL Server's braces
     * (where a doubled closing brace stands for one) included.
     */
    public static String redact(String url) {
        return url == null ? "null" : SECRET_IN_URL.matcher(url).replaceAll("$1=***");
    }

    /** A key naming a secret, then its value: braced, or up to the next {@code ;} or {@code &}. */
    private static final Pattern SECRET_IN_URL = Pattern.compile("(?i)([a-z0-9_.-]*"
            + "(?:password|pwd|secret|token|credential)[a-z0-9_.-]*)=(?:\\{(?:[^}]|\\}\\})*\\}|[^;&]*)");

    /** Event types by stable alias. Unregistered types are registered on first append under their simple name. */
    public static final class Events {

        private final Map<String, Class<?>> byAlias = new LinkedHashMap<>();
        private final Map<String, EventUpcast> upcasts = new LinkedHashMap<>();
        private EventMetadataSource metadataSource = EventMetadataSource.NONE;

        private final StoreOptions owner;
        private boolean partitionedByTenant;
        private Duration appendLockTimeout = DEFAULT_APPEND_LOCK_TIMEOUT;

        private Events(StoreOptions owner) {
            this.owner = owner;
        }

        /**
         * When on, each tenant has its own gap-free event sequence, numbered inside the append transaction, and
         * every async projection runs as one shard per (projection x tenant) with its own progression
         * {@code <shard>@<tenant>} and its own high water mark: one tenant's rebuild or import does not stall the
         * others, and one tenant can be rebuilt alone. Appends of one tenant serialize on its sequence row. Off by
         * default; switch it on before the first event is appended (existing events have no tenant sequence).
         */
        public Events partitionByTenant(boolean on) {
            this.partitionedByTenant = on;
            return this;
        }

        public boolean isPartitionedByTenant() {
            return partitionedByTenant;
        }

        /**
         * How long an append of a tenant-partitioned store waits on H2 for another append of the same tenant to
         * end (they serialize on the tenant's sequence row); default 10 s. Past it the save fails with a transient
         * error. H2 bounds every lock wait (2 s unless its URL sets LOCK_TIMEOUT), so without this setting the second
         * of two busy appends of one tenant would fail where PostgreSQL and SQL Server wait; those two engines
         * keep waiting as their own lock timeout says (no bound unless the server sets one).
         *
         * @throws ConfigurationException unless positive and at most {@link Integer#MAX_VALUE} milliseconds
         */
        public Events appendLockTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()
                    || timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
                throw new ConfigurationException("events.append-lock-timeout must be a positive duration of at most"
                        + " " + Duration.ofMillis(Integer.MAX_VALUE) + " (the engines count it in int"
                        + " milliseconds), was: " + timeout);
            }
            this.appendLockTimeout = timeout;
            return this;
        }

        public Duration getAppendLockTimeout() {
            return appendLockTimeout;
        }

        /** Back to the options, for chaining. */
        public StoreOptions and() {
            return owner;
        }

        /** Registers {@code type} under its simple class name. */
        public Events register(Class<?> type) {
            return register(type, type.getSimpleName());
        }

        /** Registers {@code type} under {@code alias}, which is what is stored; renaming the class keeps it. */
        public Events register(Class<?> type, String alias) {
            Objects.requireNonNull(type, "type");
            if (alias == null || alias.isBlank() || alias.length() > 250) {
                throw new ConfigurationException("event alias for " + type.getName()
                        + " must be 1-250 characters, was: " + (alias == null ? "null" : "'" + alias + "'"));
            }
            Class<?> previous = byAlias.get(alias);
            if (previous != null && previous != type) {
                throw new ConfigurationException("event alias '" + alias + "' is already registered for "
                        + previous.getName() + "; cannot register it for " + type.getName());
            }
            byAlias.put(alias, type);
            return this;
        }

        public Map<String, Class<?>> byAlias() {
            return Collections.unmodifiableMap(byAlias);
        }

        /**
         * Events stored under {@code fromAlias} are read as if stored under {@code toAlias} with the JSON
         * {@code transform} returns for theirs: a renamed or reshaped event type. {@code toAlias} is a registered
         * event type or the {@code fromAlias} of another upcast; the stored rows are never changed.
         *
         * @throws ConfigurationException naming the alias when it is blank, too long or already upcast
         */
        public Events upcast(String fromAlias, String toAlias, UnaryOperator<JsonObject> transform) {
            Objects.requireNonNull(transform, "transform");
            requireAlias(toAlias, "upcast target of '" + fromAlias + "'");
            return addUpcast(new EventUpcast.JsonStep(fromAlias, toAlias, transform));
        }

        /**
         * Events stored under {@code fromAlias} are read as {@code storedShape} and handed on as what
         * {@code convert} makes of them, a {@code currentType}: for changes a JSON rewrite cannot express.
         *
         * @throws ConfigurationException naming the alias when it is blank, too long or already upcast
         */
        public <O, T> Events upcast(String fromAlias, Class<O> storedShape, Class<T> currentType,
                                    Function<? super O, ? extends T> convert) {
            Objects.requireNonNull(storedShape, "storedShape");
            Objects.requireNonNull(currentType, "currentType");
            Objects.requireNonNull(convert, "convert");
            return addUpcast(new EventUpcast.TypedStep<>(fromAlias, storedShape, currentType, convert));
        }

        /**
         * Adds {@code step}, built elsewhere (in a container, a bean the extension discovered).
         *
         * @throws ConfigurationException naming the alias when it is blank, too long or already upcast
         */
        public Events upcast(EventUpcast step) {
            Objects.requireNonNull(step, "step");
            if (step instanceof EventUpcast.JsonStep json) {
                return upcast(json.fromAlias(), json.toAlias(), json.transform());
            }
            return addUpcast(step);
        }

        /**
         * Where each session's event metadata comes from by default (read once as the session opens); none by
         * default.
         */
        public Events metadataSource(EventMetadataSource source) {
            this.metadataSource = Objects.requireNonNull(source, "source");
            return this;
        }

        public EventMetadataSource getMetadataSource() {
            return metadataSource;
        }

        /** The upcasts, by the alias each reads. */
        public Map<String, EventUpcast> upcasts() {
            return Collections.unmodifiableMap(upcasts);
        }

        private Events addUpcast(EventUpcast step) {
            requireAlias(step.fromAlias(), "upcast");
            if (upcasts.containsKey(step.fromAlias())) {
                throw new ConfigurationException("event alias '" + step.fromAlias() + "' already has an upcast;"
                        + " one alias is read one way");
            }
            upcasts.put(step.fromAlias(), step);
            return this;
        }

        private static void requireAlias(String alias, String what) {
            if (alias == null || alias.isBlank() || alias.length() > 250) {
                throw new ConfigurationException("event alias of " + what + " must be 1-250 characters, was: "
                        + (alias == null ? "null" : "'" + alias + "'"));
            }
        }
    }

    /** Document types, each stored in its own table {@code <prefix>doc_<name>}. */
    public static final class Documents {

        private final List<DocumentType<?>> types = new ArrayList<>();
        private final List<DocumentIndex> indexes = new ArrayList<>();

        private final StoreOptions owner;

        private Documents(StoreOptions owner) {
            this.owner = owner;
        }

        /** Back to the options, for chaining. */
        public StoreOptions and() {
            return owner;
        }

        /**
         * Registers {@code type}, stored under its lower-cased simple name, its id read from a record component,
         * field or getter named {@code id}.
         */
        public Documents register(Class<?> type) {
            String name = type.getSimpleName().toLowerCase(java.util.Locale.ROOT);
            return add(new DocumentType<>(type, requireIdentifier("document name of " + type.getName(), name), null));
        }

        /** Registers {@code type} under {@code name} (a plain identifier) with an explicit id accessor. */
        public <T> Documents register(Class<T> type, String name, Function<T, ?> id) {
            return add(new DocumentType<>(type, requireIdentifier("document name of " + type.getName(), name),
                    Objects.requireNonNull(id, "id")));
        }

        private Documents add(DocumentType<?> type) {
            types.removeIf(t -> t.type() == type.type());
            types.add(type);
            return this;
        }

        public List<DocumentType<?>> types() {
            return Collections.unmodifiableList(types);
        }

        /**
         * Indexes {@code type}'s documents on the properties at {@code paths} (one path, or several for a composite
         * index), per tenant, created by schema apply. A query filtering or ordering on the first path then reads the
         * index: the property is compared as the type its class declares there, which the index is built for. Works
         * for registered documents and projection documents alike.
         *
         * @throws ConfigurationException when no path is given
         */
        public Documents index(Class<?> type, String... paths) {
            return addIndex(type, false, paths);
        }

        /**
         * {@link #index}, and no two documents of a tenant may hold the same values at {@code paths} (documents
         * without them are not compared): {@code saveChanges} and daemon pages that would break it fail.
         */
        public Documents uniqueIndex(Class<?> type, String... paths) {
            return addIndex(type, true, paths);
        }

        /** Adds {@code index}, declared elsewhere (in a container, a bean the extension discovered). */
        public Documents index(DocumentIndex index) {
            Objects.requireNonNull(index, "index");
            return addIndex(index.type(), index.unique(), index.paths().toArray(String[]::new));
        }

        private Documents addIndex(Class<?> type, boolean unique, String... paths) {
            Objects.requireNonNull(type, "type");
            if (paths == null || paths.length == 0) {
                throw new ConfigurationException("an index of " + type.getName() + " needs at least one property path");
            }
            indexes.add(new DocumentIndex(type, List.of(paths), unique));
            return this;
        }

        public List<DocumentIndex> indexes() {
            return Collections.unmodifiableList(indexes);
        }
    }

    /**
     * A declared index of a document type.
     *
     * @param type   the document type
     * @param paths  the property paths it covers, in key order
     * @param unique whether documents of a tenant must differ in them
     */
    public record DocumentIndex(Class<?> type, List<String> paths, boolean unique) {

        public DocumentIndex {
            paths = List.copyOf(paths);
        }
    }

    /**
     * A registered document type.
     *
     * @param type the Java type
     * @param name the storage name (table {@code <prefix>doc_<name>})
     * @param id   reads a document's id, or null to find an {@code id} member
     */
    public record DocumentType<T>(Class<T> type, String name, Function<T, ?> id) {
    }

    /**
     * Tenants kept in databases other than the store's own: one {@code DataSource} per database, every database
     * holding the full schema. Sessions of a mapped tenant read and write its database; the daemon runs that
     * tenant's shards against it. Needs {@link Events#partitionByTenant(boolean) tenant-partitioned events}, since
     * each database numbers its own log.
     */
    public static final class Tenancy {

        private final StoreOptions owner;
        private final Map<String, TenantDatabase> databases = new LinkedHashMap<>();
        private final Map<String, String> databaseOfTenant = new LinkedHashMap<>();
        private final Map<String, DataSource> replicas = new LinkedHashMap<>();
        private TenantResolver resolver;

        private Tenancy(StoreOptions owner) {
            this.owner = owner;
        }

        /** Back to the options, for chaining. */
        public StoreOptions and() {
            return owner;
        }

        /**
         * Adds database {@code name} (a plain identifier) reached through {@code dataSource}, holding
         * {@code tenantIds}: none when a {@link #resolver} places tenants there as they are first used. The data
         * source is not closed with the store.
         *
         * @throws ConfigurationException when the name is not an identifier or already used, or a tenant is mapped
         *                                twice
         */
        public Tenancy database(String name, DataSource dataSource, String... tenantIds) {
            requireIdentifier("tenancy database name", name);
            Objects.requireNonNull(dataSource, "dataSource of tenancy database " + name);
            return add(new TenantDatabase(name, dataSource, null), tenantIds);
        }

        /**
         * Adds database {@code name} (a plain identifier) reached through {@code jdbcUrl}, holding {@code tenantIds}
         * as {@link #database(String, DataSource, String...)} does. The store opens a pool for it, signs in with the
         * store's own {@link StoreOptions#connection username and password} (none unless the store is given a URL
         * too; the URL may carry its own), sizes the pool by the {@link StoreOptions#connectionBudget connection
         * budget} and closes it with the store.
         *
         * @throws ConfigurationException when the name is not an identifier or already used, the URL is blank or
         *                                does not start with {@code jdbc:}, or a tenant is mapped twice
         */
        public Tenancy database(String name, String jdbcUrl, String... tenantIds) {
            requireIdentifier("tenancy database name", name);
            if (jdbcUrl == null || jdbcUrl.isBlank() || !jdbcUrl.startsWith("jdbc:")) {
                throw new ConfigurationException("the url of tenancy database '" + name + "' must start with"
                        + " 'jdbc:', was: " + (jdbcUrl == null ? "null" : "'" + redact(jdbcUrl) + "'"));
            }
            return add(new TenantDatabase(name, null, jdbcUrl), tenantIds);
        }

        /**
         * Gives tenancy database {@code databaseName}, added before by {@link #database}, a read replica: its
         * tenants' query sessions read there, as {@link StoreOptions#replica} says for the store's own database. The
         * data source is not closed with the store.
         *
         * @throws ConfigurationException naming the database when it was not added (the store's own takes
         *                                {@link StoreOptions#replica}), already has a replica, or the replica is
         *                                its primary data source
         */
        public Tenancy replica(String databaseName, DataSource replicaDataSource) {
            requireIdentifier("tenancy database name", databaseName);
            Objects.requireNonNull(replicaDataSource, "replica of tenancy database " + databaseName);
            if (DEFAULT_DATABASE.equals(databaseName)) {
                throw new ConfigurationException("tenancy database '" + DEFAULT_DATABASE + "' is the store's own:"
                        + " give it a replica with StoreOptions.replica(dataSource)");
            }
            TenantDatabase database = databases.get(databaseName);
            if (database == null) {
                throw new ConfigurationException("cannot give tenancy database '" + databaseName + "' a replica: no"
                        + " such database; add it with tenancy().database(...) first (databases: "
                        + databases.keySet() + ")");
            }
            if (replicas.containsKey(databaseName)) {
                throw new ConfigurationException("tenancy database '" + databaseName + "' is given a replica twice");
            }
            if (replicaDataSource == database.dataSource()) {
                throw new ConfigurationException("the replica of tenancy database '" + databaseName + "' is its"
                        + " primary data source; pass the data source of a standby, or no replica");
            }
            replicas.put(databaseName, replicaDataSource);
            return this;
        }

        /** The read replicas of the tenancy databases that have one, by database name. */
        public Map<String, DataSource> replicas() {
            return Collections.unmodifiableMap(replicas);
        }

        private Tenancy add(TenantDatabase database, String... tenantIds) {
            String name = database.name();
            if (DEFAULT_DATABASE.equals(name) || databases.containsKey(name)) {
                throw new ConfigurationException("tenancy database '" + name + "' is defined twice"
                        + (DEFAULT_DATABASE.equals(name) ? " ('" + DEFAULT_DATABASE + "' is the store's own)" : ""));
            }
            for (String tenant : tenantIds == null ? new String[0] : tenantIds) {
                requireTenantId("tenant of tenancy database " + name, tenant);
                String previous = databaseOfTenant.putIfAbsent(tenant, name);
                if (previous != null) {
                    throw new ConfigurationException("tenant '" + tenant + "' is mapped to tenancy databases '"
                            + previous + "' and '" + name + "'");
                }
            }
            databases.put(name, database);
            return this;
        }

        /**
         * Finds the database of a tenant not listed in {@link #database} when it is first used, so tenants can be
         * added while the store runs (see {@link TenantResolver}); null (the default) keeps every unlisted tenant in
         * the store's own database.
         */
        public Tenancy resolver(TenantResolver tenantResolver) {
            this.resolver = tenantResolver;
            return this;
        }

        /** The resolver of unlisted tenants, or null. */
        public TenantResolver resolver() {
            return resolver;
        }

        /** The extra databases, in the order they were added. */
        public List<TenantDatabase> databases() {
            return List.copyOf(databases.values());
        }

        /** Tenant id to database name, for tenants that are not in the store's own database. */
        public Map<String, String> databaseOfTenant() {
            return Collections.unmodifiableMap(databaseOfTenant);
        }
    }

    /** The name of the store's own database in tenancy mappings and shard status. */
    public static final String DEFAULT_DATABASE = "default";

    /**
     * One database tenants live in, reached through the application's data source or through a URL the store opens
     * a pool for: exactly one of the two is set.
     *
     * @param name       a plain identifier, unique in the store
     * @param dataSource how to reach it, or null when the store opens a pool for {@code jdbcUrl}
     * @param jdbcUrl    where the store opens a pool, or null when the application passes {@code dataSource}
     */
    public record TenantDatabase(String name, DataSource dataSource, String jdbcUrl) {

        /** A database reached through the application's {@code dataSource}. */
        public TenantDatabase(String name, DataSource dataSource) {
            this(name, dataSource, null);
        }
    }

    /**
     * Checks a tenant id: not blank, at most {@link IdLimits#MAX_TENANT_ID_LENGTH} characters.
     *
     * @throws ConfigurationException naming {@code setting} and what was wrong with the value otherwise
     */
    public static String requireTenantId(String setting, String tenantId) {
        String problem = IdLimits.tenantIdProblem(tenantId);
        if (problem != null) {
            throw new ConfigurationException(setting + ": " + problem);
        }
        return tenantId;
    }
}
