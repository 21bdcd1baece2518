package dev.ferret.runtime.context;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.TenantResolver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Which database each tenant lives in: the store's own unless the configuration maps it elsewhere, or the
 * {@link TenantResolver}, asked once per tenant at its first use, places it elsewhere. The configured mapping is
 * immutable; the resolver's answers are kept in a concurrent map until {@link #forget} drops one (a tenant moving),
 * so sessions and agents read it without locks.
 */
public final class TenantDatabases {

    /**
     * One database of the store.
     *
     * @param name       {@link StoreOptions#DEFAULT_DATABASE} for the store's own
     * @param dataSource how to reach it
     */
    public record Database(String name, DataSource dataSource) {
    }

    private final Database main;
    private final List<Database> all;
    private final Map<String, Database> byName;
    private final Map<String, Database> byTenant;
    private final TenantResolver resolver;
    private final ConcurrentMap<String, Database> resolved = new ConcurrentHashMap<>();

    /** The databases of {@code tenancy}, each reached through the data source it was given. */
    public TenantDatabases(DataSource mainDataSource, StoreOptions.Tenancy tenancy, boolean partitionedByTenant) {
        this(mainDataSource, tenancy, partitionedByTenant, StoreOptions.TenantDatabase::dataSource);
    }

    /**
     * The databases of {@code tenancy}, each reached through what {@code reach} gives for it: its own data source,
     * or the pool the store opened for its URL.
     */
    public TenantDatabases(DataSource mainDataSource, StoreOptions.Tenancy tenancy, boolean partitionedByTenant,
                           Function<StoreOptions.TenantDatabase, DataSource> reach) {
        this.main = new Database(StoreOptions.DEFAULT_DATABASE, mainDataSource);
        this.resolver = tenancy.resolver();
        List<Database> databases = new ArrayList<>();
        databases.add(main);
        Map<String, Database> names = new LinkedHashMap<>();
        names.put(main.name(), main);
        for (StoreOptions.TenantDatabase database : tenancy.databases()) {
            Database added = new Database(database.name(), reach.apply(database));
            databases.add(added);
            names.put(added.name(), added);
            if (resolver == null && !tenancy.databaseOfTenant().containsValue(added.name())) {
                throw new ConfigurationException("tenancy database '" + added.name() + "' holds no tenant: list"
                        + " its tenants in tenancy().database(...), or set tenancy().resolver(...) to place tenants"
                        + " there as they are first used");
            }
        }
        if (databases.size() > 1 && !partitionedByTenant) {
            throw new ConfigurationException("tenancy databases " + databases.subList(1, databases.size()).stream()
                    .map(Database::name).toList() + " need tenant-partitioned events"
                    + " (events().partitionByTenant(true)): each database numbers its own event log");
        }
        Map<String, Database> tenants = new LinkedHashMap<>();
        tenancy.databaseOfTenant().forEach((tenant, name) -> tenants.put(tenant, names.get(name)));
        this.all = List.copyOf(databases);
        this.byName = Map.copyOf(names);
        this.byTenant = Map.copyOf(tenants);
    }

    /**
     * The database {@code tenantId} lives in: as configured, else as the resolver answered (asked now if it has not
     * been for this tenant), else the store's own.
     *
     * @throws ConfigurationException when the resolver names a database the store does not have
     */
    public Database of(String tenantId) {
        Database database = byTenant.get(tenantId);
        if (database != null) {
            return database;
        }
        if (resolver == null || tenantId == null) {
            return main;
        }
        return resolved.computeIfAbsent(tenantId, this::resolve);
    }

    private Database resolve(String tenantId) {
        Optional<String> answer = resolver.databaseOf(tenantId);
        if (answer == null || answer.isEmpty()) {
            return main;
        }
        Database database = byName.get(answer.get());
        if (database == null) {
            throw new ConfigurationException("the tenant resolver placed tenant '" + tenantId + "' in database '"
                    + answer.get() + "', which the store does not have; its databases: " + byName.keySet());
        }
        return database;
    }

    /**
     * Forgets what the resolver answered for {@code tenantId}: its next use asks again. A tenant listed in the
     * configuration stays where it is listed.
     */
    public void forget(String tenantId) {
        resolved.remove(tenantId);
    }

    /** Whether tenants are resolved at first use (they can be added, and moved, while the store runs). */
    public boolean resolvesTenants() {
        return resolver != null;
    }

    /** The store's own database. */
    public Database main() {
        return main;
    }

    /** Every database, the store's own first. */
    public List<Database> all() {
        return all;
    }

    /** Whether {@code tenantId} lives in {@code database}: mapped or resolved there, or neither and it is the main. */
    public boolean holds(Database database, String tenantId) {
        return of(tenantId).equals(database);
    }
}
