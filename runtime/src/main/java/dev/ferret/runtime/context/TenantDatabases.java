package dev.ferret.runtime.context;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Which database each tenant lives in: the store's own unless the configuration maps it elsewhere. Immutable, so
 * sessions and agents read it without locks.
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
    private final Map<String, Database> byTenant;

    public TenantDatabases(DataSource mainDataSource, StoreOptions.Tenancy tenancy, boolean partitionedByTenant) {
        this.main = new Database(StoreOptions.DEFAULT_DATABASE, mainDataSource);
        List<Database> databases = new ArrayList<>();
        databases.add(main);
        Map<String, Database> byName = new LinkedHashMap<>();
        for (StoreOptions.TenantDatabase database : tenancy.databases()) {
            Database added = new Database(database.name(), database.dataSource());
            databases.add(added);
            byName.put(added.name(), added);
        }
        if (databases.size() > 1 && !partitionedByTenant) {
            throw new ConfigurationException("tenancy databases " + byName.keySet() + " need tenant-partitioned"
                    + " events (events().partitionByTenant(true)): each database numbers its own event log");
        }
        Map<String, Database> tenants = new LinkedHashMap<>();
        tenancy.databaseOfTenant().forEach((tenant, name) -> tenants.put(tenant, byName.get(name)));
        this.all = List.copyOf(databases);
        this.byTenant = Map.copyOf(tenants);
    }

    /** The database {@code tenantId} lives in. */
    public Database of(String tenantId) {
        Database database = byTenant.get(tenantId);
        return database != null ? database : main;
    }

    /** The store's own database. */
    public Database main() {
        return main;
    }

    /** Every database, the store's own first. */
    public List<Database> all() {
        return all;
    }

    /** Whether {@code tenantId} is mapped to {@code database}, or unmapped and {@code database} is the main one. */
    public boolean holds(Database database, String tenantId) {
        return of(tenantId).equals(database);
    }
}
