package dev.ferret.runtime;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonSettings;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * How many connections each pool Ferret opens may hold: what the daemon needs on that pool's database, plus room for
 * the application's sessions, out of {@link StoreOptions#connectionBudget} when one is set. Pure arithmetic on the
 * options; it opens nothing.
 *
 * <p>The daemon's need follows from how it uses connections (docs/guide/tenancy.md, Connections): a page holds one
 * connection while it loads and another while it writes, never both, so a database never has more page connections
 * than the worker threads, nor more than the two per-database caps together when both are set; one more polls the
 * database's marks. The store's own database also holds the HotCold lock session, and on PostgreSQL with commit
 * signals on, the connection listening for other nodes' commits.
 */
final class ConnectionBudget {

    /** Connections each owned pool holds beyond the daemon's need when no budget is set: the application's sessions. */
    static final int SESSION_HEADROOM = 4;

    private ConnectionBudget() {
    }

    /**
     * The connections the daemon needs on the store's own database ({@code ownDatabase}) or on another one.
     *
     * @param listensForCommits whether the store's own database also holds the commit-signal listener
     */
    static int need(DaemonSettings settings, boolean ownDatabase, boolean listensForCommits) {
        int workers = settings.getWorkerThreads();
        if (ownDatabase) {
            return workers + 2 + (listensForCommits ? 1 : 0);
        }
        int loads = settings.getMaxConcurrentEventLoadsPerDatabase();
        int writes = settings.getMaxConcurrentBatchWritesPerDatabase();
        // one cap alone leaves the other phase free to take every worker: only both together bound a database
        int pages = loads > 0 && writes > 0 ? Math.min(workers, loads + writes) : workers;
        return pages + 1;
    }

    /**
     * The daemon's need on each database Ferret opens a pool for, in the order the pools open: the store's own when
     * it has no data source, then each tenancy database given by URL, as added.
     */
    static Map<String, Integer> needs(StoreOptions options, boolean listensForCommits) {
        Map<String, Integer> needs = new LinkedHashMap<>();
        if (options.getDataSource() == null) {
            needs.put(StoreOptions.DEFAULT_DATABASE, need(options.daemon(), true, listensForCommits));
        }
        for (StoreOptions.TenantDatabase database : options.tenancy().databases()) {
            if (database.jdbcUrl() != null) {
                needs.put(database.name(), need(options.daemon(), false, false));
            }
        }
        return needs;
    }

    /**
     * The size of each pool Ferret opens, by database, in the order of {@link #needs}: its need plus
     * {@link #SESSION_HEADROOM} without a budget; with one, its need plus an even share of what the needs leave,
     * the first pools one more each until the budget is spent.
     *
     * @throws ConfigurationException when the budget is below the needs together, naming each
     */
    static Map<String, Integer> poolSizes(StoreOptions options, boolean listensForCommits) {
        Map<String, Integer> needs = needs(options, listensForCommits);
        int budget = options.getConnectionBudget();
        Map<String, Integer> sizes = new LinkedHashMap<>();
        if (budget == 0 || needs.isEmpty()) {
            needs.forEach((database, need) -> sizes.put(database, need + SESSION_HEADROOM));
            return sizes;
        }
        int needed = needs.values().stream().mapToInt(Integer::intValue).sum();
        if (budget < needed) {
            throw new ConfigurationException("connectionBudget " + budget + " is below the " + needed
                    + " connections the daemon needs on the pools Ferret opens ("
                    + needs.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                    .collect(Collectors.joining(", "))
                    + ", with workerThreads " + options.daemon().getWorkerThreads() + "): raise it to at least "
                    + needed + ", or lower workerThreads or the per-database load and write caps");
        }
        int share = (budget - needed) / needs.size();
        int left = (budget - needed) % needs.size();
        for (Map.Entry<String, Integer> entry : needs.entrySet()) {
            sizes.put(entry.getKey(), entry.getValue() + share + (left-- > 0 ? 1 : 0));
        }
        return sizes;
    }
}
