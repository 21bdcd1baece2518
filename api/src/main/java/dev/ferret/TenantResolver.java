package dev.ferret;

import java.util.Optional;

/**
 * Finds the database a tenant lives in when the tenant is first used, so tenants can be added while the store runs:
 * set with {@code options.tenancy().resolver(...)}, or in a container as a CDI bean implementing it. Tenants listed
 * in {@code tenancy().database(...)} are never asked about. A tenant's answer is kept until
 * {@code daemon().releaseTenant} forgets it (to move the tenant), so it is asked about once per tenant and node.
 *
 * <p>Called from any thread, sessions' and the daemon's; must not block for long (read a table or a cache, not a
 * remote service on every call).
 */
@FunctionalInterface
public interface TenantResolver {

    /**
     * The name of the database {@code tenantId} lives in: one declared with {@code tenancy().database(...)}, or
     * {@link StoreOptions#DEFAULT_DATABASE}; empty for the store's own database.
     */
    Optional<String> databaseOf(String tenantId);
}
