package dev.ferret.runtime.daemon;

import dev.ferret.ConfigurationException;
import dev.ferret.IdLimits;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.subscriptions.SubscriptionBase;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks, once when the store starts, that every shard name that can arise fits where it is kept. A shard is named
 * {@code <name>:All} ({@code <name>:V<n>:All} above version 1) and, with events partitioned by tenant,
 * {@code <shard>@<tenant>} for every tenant that ever appends: any tenant id up to
 * {@link IdLimits#MAX_TENANT_ID_LENGTH}, so the check assumes the longest rather than today's tenants. Without it a
 * name too long fails only when its shard first commits (PostgreSQL, SQL Server) and pauses there, or was cut to
 * the column and shared another shard's row. Runs without a database.
 */
public final class ShardNames {

    /** Stands in for the longest tenant id: only its length matters. */
    private static final String LONGEST_TENANT = "t".repeat(IdLimits.MAX_TENANT_ID_LENGTH);

    private ShardNames() {
    }

    /** A shard of the whole log: {@code <name>:All}, or {@code <name>:V<n>:All} above version 1. */
    public static String base(String name, int version) {
        return version == 1 ? name + ":All" : name + ":V" + version + ":All";
    }

    /**
     * Refuses every async projection and subscription one of whose shard names, or HotCold lock names under
     * {@link DaemonMode#HOT_COLD}, is longer than {@code dialect} keeps.
     *
     * @throws ConfigurationException naming each of them, the length its names reach and the limit
     */
    public static void check(ProjectionOptions projections, boolean partitionedByTenant, DaemonMode mode,
                             Dialect dialect, TableNames names) {
        List<String> problems = new ArrayList<>();
        for (ProjectionOptions.Registration registration : projections.registrations()) {
            if (registration.lifecycle() == Lifecycle.ASYNC) {
                check("projection " + registration.projection(), registration.projection().name(),
                        registration.projection().version(), partitionedByTenant, mode, dialect, names, problems);
            }
        }
        for (SubscriptionBase subscription : projections.subscriptions()) {
            check("subscription '" + subscription.name() + "' (" + subscription.getClass().getName() + ")",
                    subscription.name(), 1, partitionedByTenant, mode, dialect, names, problems);
        }
        if (!problems.isEmpty()) {
            throw new ConfigurationException(String.join("; ", problems));
        }
    }

    private static void check(String owner, String name, int version, boolean partitionedByTenant, DaemonMode mode,
                              Dialect dialect, TableNames names, List<String> problems) {
        String base = base(name, version);
        // the same naming the daemon uses, so the check cannot drift from the names it checks
        String longest = partitionedByTenant ? new LogPartition(LONGEST_TENANT, null).shardName(base) : base;
        String shape = partitionedByTenant ? base + "@<tenant id>" : base;
        String tenantNote = partitionedByTenant ? " with a tenant id of the longest " + IdLimits.MAX_TENANT_ID_LENGTH
                + " characters (events are partitioned by tenant)" : "";
        int limit = Dialect.MAX_SHARD_NAME_LENGTH;
        if (longest.length() > limit) {
            problems.add(owner + ": its shard name '" + shape + "' is " + longest.length() + " characters long"
                    + tenantNote + ", over the limit of " + limit + " (the width of pc_event_progression.name and"
                    + " pc_dead_letters.projection); " + shorter(name, longest.length(), limit));
            return;
        }
        if (mode == DaemonMode.HOT_COLD) {
            String lock = Dialect.shardLockName(names, longest);
            int lockLimit = dialect.maxShardLockNameLength();
            if (lock.length() > lockLimit) {
                problems.add(owner + ": its HotCold lock name '" + Dialect.shardLockName(names, shape) + "' is "
                        + lock.length() + " characters long" + tenantNote + ", over the limit of " + lockLimit
                        + " that " + dialect.engine() + " keeps of a lock name (a longer one would be cut, and"
                        + " shards sharing the first " + lockLimit + " characters would share one lock); "
                        + shorter(name, lock.length(), lockLimit) + ", or shorten the schema or tablePrefix");
            }
        }
    }

    private static String shorter(String name, int length, int limit) {
        int room = name.length() - (length - limit);
        return room > 0 ? "give it a name of at most " + room + " characters"
                : "no name is short enough";
    }
}
