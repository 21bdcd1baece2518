package dev.ferret.daemon;

import dev.ferret.ConfigurationException;
import dev.ferret.daemon.Setting.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How the async daemon runs. Each setting is declared once below as a {@link Setting}, which gives its setter's
 * validation, its configuration key and its documentation; every setter names the setting and value it refuses.
 *
 * <p>Sealed at start, the way HikariCP seals its configuration: a store validates these settings, runs on a copy
 * of them that nobody else holds, and seals this object, whose setters from then on throw
 * {@link IllegalStateException} naming the setting. No setting is tuned live: every one shapes threads, timers or
 * locks the daemon sets up at start, so a change needs a new store.
 */
public final class DaemonSettings {

    private static final List<Setting<?>> DECLARED = new ArrayList<>();

    /** The daemon's mode. */
    public static final Setting<DaemonMode> MODE = declare("mode", "daemon.mode", DaemonMode.class,
            DaemonMode.DISABLED, Rule.any("DISABLED, SOLO or HOT_COLD"),
            "`SOLO` runs every shard on this node; `HOT_COLD` runs the shards whose lock this node holds");
    public static final Setting<Duration> POLLING_INTERVAL = declare("pollingInterval", "daemon.polling-interval",
            Duration.class, Duration.ofMillis(500), Rule.positive(), "detector poll when nothing moved");
    public static final Setting<Boolean> COMMIT_SIGNALS = declare("commitSignals", "daemon.commit-signals",
            Boolean.class, true, Rule.any("true or false"), "on PostgreSQL, a commit here is signalled to every node"
                    + " (NOTIFY after the commit, never in its transaction) and this node listens for theirs on one"
                    + " connection of the store's database, so they detect at once; off, or on other engines, other"
                    + " nodes' appends are seen at the next poll");
    public static final Setting<Boolean> METRICS_PER_SHARD = declare("metricsPerShard", "daemon.metrics-per-shard",
            Boolean.class, false, Rule.any("true or false"), "off, the daemon's metrics carry the projection"
                    + " (`ferret.projection`) and the database (`ferret.database`), and the gauges give each pair's"
                    + " worst lag and lowest progression: a series count that does not grow with tenants; on, each"
                    + " shard's carry its name (`ferret.shard`) too, one series per shard and instrument");
    public static final Setting<Duration> STALE_SEQUENCE_THRESHOLD = declare("staleSequenceThreshold",
            "daemon.stale-sequence-threshold", Duration.class, Duration.ofSeconds(3), Rule.positive(),
            "age of an owned hole before the status reports the mark stalled (a hole is claimed after one"
                    + " `pollingInterval`, at most this)");
    public static final Setting<Duration> APPEND_FENCE_TIMEOUT = declare("appendFenceTimeout",
            "daemon.append-fence-timeout", Duration.class, Duration.ofSeconds(1), Rule.positive(),
            "no longer waited for (holes are resolved by their owners, there is no fence); kept so configurations"
                    + " that set it still start, and still counted into `detectorHeartbeatBound()`");
    public static final Setting<Duration> FORCED_GAP_SKIP_THRESHOLD = declare("forcedGapSkipThreshold",
            "daemon.forced-gap-skip-threshold", Duration.class, Duration.ofMinutes(2), Rule.positive(),
            "stall length after which a hole is skipped anyway (loudly); events that commit into a skip are not"
                    + " projected, so keep it well above your longest append transaction");
    public static final Setting<Integer> BATCH_SIZE = declare("batchSize", "daemon.batch-size", Integer.class, 500,
            Rule.between(1, 100_000), "events per page");
    public static final Setting<Integer> MAX_BATCH_GROWTH = declare("maxBatchGrowth", "daemon.max-batch-growth",
            Integer.class, 10, Rule.between(1, 1_000),
            "while a shard is far behind its mark each full page doubles the next, up to this multiple of"
                    + " `batchSize` (and at most 100,000 events, and a quarter of `tenantLoadBudget` when one is set);"
                    + " the first page that is not full, and any failed page, go back to `batchSize`; 1 keeps every"
                    + " page at `batchSize`");
    public static final Setting<Integer> REBUILD_BATCH_GROWTH = declare("rebuildBatchGrowth",
            "daemon.rebuild-batch-growth", Integer.class, 100, Rule.between(1, 1_000),
            "a rebuild's replay (behind the live tables, read by no query until its swap) loads pages of this"
                    + " multiple of `batchSize` from its first page on (at most 100,000 events, and a quarter of"
                    + " `tenantLoadBudget` when one is set): each page rewrites the documents it touches once, so"
                    + " bigger pages rewrite fewer; a page holds its events and the documents they build in memory");
    public static final Setting<Integer> DOCUMENT_CACHE_SIZE = declare("documentCacheSize",
            "daemon.document-cache-size", Integer.class, 1_000, Rule.between(0, 10_000_000),
            "snapshots a snapshot projection's shard keeps between pages instead of reading them back (it is their"
                    + " only writer; documents written to a snapshot's type outside its projection are not seen by"
                    + " it), at most, per shard; all shards share the store's `documentCacheMegabytes`; 0 reads every"
                    + " page's snapshots back");
    public static final Setting<Integer> DOCUMENT_CACHE_MEGABYTES = declare("documentCacheMegabytes",
            "daemon.document-cache-megabytes", Integer.class, 64, Rule.between(0, 1_048_576),
            "the memory every shard's kept snapshots take together, in MiB (their JSON as UTF-16 plus about 160"
                    + " bytes an entry): the least used leave first, whichever shard they belong to, so the bound"
                    + " holds at any number of shards; 0 keeps none");
    public static final Setting<Integer> SHARED_LOAD_MEGABYTES = declare("sharedLoadMegabytes",
            "daemon.shared-load-megabytes", Integer.class, 16, Rule.between(0, 1_048_576),
            "the memory the pages of events read lately take together, in MiB, kept so that the shards reading the"
                    + " same slice of the log from the same floor (a tenant's projections, or several projections of"
                    + " one database) read it and deserialize its events once: the least used leave first, none stays"
                    + " longer than a minute; 0 has every shard read its own pages");
    public static final Setting<Boolean> SHARED_TRANSACTIONS = declare("sharedTransactions",
            "daemon.shared-transactions", Boolean.class, false, Rule.any("true or false"), "on, the pages of"
                    + " several shards of one database that are ready at the same moment commit in one transaction when"
                    + " each holds only its own writes (documents of a projection that is their only writer, dead"
                    + " letters, progression; no messages or raised events): a page that fails, conflicts or is"
                    + " cancelled rolls the group back and each page writes alone; off, every page commits in a"
                    + " transaction of its own (measured faster on a local database: see the tenancy guide)");
    public static final Setting<Boolean> ASYNC_PAGE_COMMITS = declare("asyncPageCommits",
            "daemon.async-page-commits", Boolean.class, true, Rule.any("true or false"), "on PostgreSQL, a page's"
                    + " transaction commits without waiting for its WAL to reach the disk (synchronous_commit off for"
                    + " that transaction only): a server crash may lose the last pages' commits, whole, and the daemon"
                    + " applies them again from the progression that reached the disk; off, every page waits for the"
                    + " flush; other engines always wait");
    public static final Setting<Integer> WORKER_THREADS = declare("workerThreads", "daemon.worker-threads",
            Integer.class, 4, Rule.between(1, 1024), "page loops and outbox deliveries running at once on this node"
                    + " (in a container: at most this many of the managed executor's threads)");
    public static final Setting<Boolean> SKIP_APPLY_ERRORS = declare("skipApplyErrors", "daemon.skip-apply-errors",
            Boolean.class, false, Rule.any("true or false"), "dead-letter poison events instead of pausing");
    public static final Setting<Integer> MAX_TRANSIENT_RETRIES = declare("maxTransientRetries",
            "daemon.max-transient-retries", Integer.class, 5, Rule.between(0, 100),
            "retries of a page that failed on a transient database error before the shard backs off (in a container"
                    + " with MicroProfile Fault Tolerance, of its `@Retry`)");
    public static final Setting<Duration> TRANSIENT_RETRY_BACKOFF = declare("transientRetryBackoff",
            "daemon.transient-retry-backoff", Duration.class, Duration.ofMillis(100), Rule.positive(),
            "first back-off after a transient failure, doubled per retry up to `maxRetryBackoff`");
    public static final Setting<Duration> MAX_RETRY_BACKOFF = declare("maxRetryBackoff", "daemon.max-retry-backoff",
            Duration.class, Duration.ofSeconds(5), Rule.positive(),
            "longest back-off between retries while the database is unreachable");
    public static final Setting<Duration> STALLED_SHARD_THRESHOLD = declare("stalledShardThreshold",
            "daemon.stalled-shard-threshold", Duration.class, Duration.ofMinutes(2), Rule.positive(),
            "how long a shard that should run may stay behind its mark without committing before liveness goes"
                    + " DOWN; keep it above your slowest page plus the longest wait in the load budget's line or the"
                    + " throttles");
    public static final Setting<Duration> OUTBOX_RETENTION = declare("outboxRetention", "daemon.outbox-retention",
            Duration.class, Duration.ofHours(1), Rule.positive(), "how long a delivered side-effect message stays"
                    + " in `pc_outbox` before the dispatcher deletes it; undelivered ones are never deleted");
    public static final Setting<Duration> OUTBOX_DELIVERY_TIMEOUT = declare("outboxDeliveryTimeout",
            "daemon.outbox-delivery-timeout", Duration.class, Duration.ofSeconds(30), Rule.positive(),
            "how long one call of the side-effect publisher may take; a call past it counts as failed and is"
                    + " retried after the back-off (a call still hung is not started twice)");
    public static final Setting<Duration> STOP_AND_DRAIN_TIMEOUT = declare("stopAndDrainTimeout",
            "projections.stop-and-drain-timeout", Duration.class, Duration.ofSeconds(5), Rule.anyDuration("no bound"),
            "how long stopping a shard waits for its page in flight before cancelling it (rolled back, re-processed"
                    + " by the next owner); applies to stopping one shard, all (in parallel) and restarts");
    public static final Setting<Duration> MONITORING_INTERVAL = declare("monitoringInterval",
            "daemon.lock.monitoring-interval", Duration.class, Duration.ofSeconds(5),
            Rule.anyDuration("no monitor, split brain"), "HotCold lock monitor period: how often a node asks the"
                    + " database which shard locks it still holds, stopping the shards whose lock is gone");
    public static final Setting<Duration> PROBE_TIMEOUT = declare("probeTimeout", "daemon.lock.probe-timeout",
            Duration.class, Duration.ofSeconds(3), Rule.positive(),
            "bound on one lock probe, and so on shutdown waiting behind one; must be shorter than"
                    + " `monitoringInterval`");
    public static final Setting<Duration> LOCK_ACQUIRE_INTERVAL = declare("lockAcquireInterval",
            "daemon.lock.acquire-interval", Duration.class, Duration.ofSeconds(1), Rule.positive(),
            "how often a HotCold node tries to take free shards and beats its heartbeat");
    public static final Setting<Integer> TENANT_LOAD_BUDGET_MEGABYTES = declare("tenantLoadBudgetMegabytes",
            "daemon.tenant-load-budget-megabytes", Integer.class, 0, Rule.between(0, 1_048_576),
            "most MiB this node's pages in flight may take once applied, each page counted by what its shard's last"
                    + " pages took per event (documents built and serialized, about 512 bytes an event at least), so a"
                    + " projection that fans one event out to many documents gets pages of few events; 0 counts no"
                    + " bytes; see [Many tenants](tenancy.md#many-tenants)");
    public static final Setting<Long> TENANT_LOAD_BUDGET = declare("tenantLoadBudget", "daemon.tenant-load-budget",
            Long.class, 0L, new Rule<>("0 (unbounded) or more", n -> n >= 0),
            "most events this node's agents may have loaded but not committed; agents wait for room in one FIFO"
                    + " line, and a load is always allowed when nothing is in flight;"
                    + " see [Many tenants](tenancy.md#many-tenants)");
    public static final Setting<Double> TENANT_LOAD_MEMORY_THRESHOLD = declare("tenantLoadMemoryThreshold",
            "daemon.tenant-load-memory-threshold", Double.class, 0.9,
            new Rule<>("a fraction of the maximum heap in (0, 1]", f -> f > 0 && f <= 1),
            "with a budget: used heap after GC past this fraction of the maximum lets no new page in until the work"
                    + " in flight drains");
    public static final Setting<Integer> MAX_CONCURRENT_EVENT_LOADS = declare("maxConcurrentEventLoadsPerDatabase",
            "daemon.max-concurrent-event-loads", Integer.class, 0, new Rule<>("0 (unbounded) or more", n -> n >= 0),
            "at most this many page loads run at once on this node, for connection counts");
    public static final Setting<Integer> MAX_CONCURRENT_BATCH_WRITES = declare("maxConcurrentBatchWritesPerDatabase",
            "daemon.max-concurrent-batch-writes", Integer.class, 0, new Rule<>("0 (unbounded) or more", n -> n >= 0),
            "at most this many page writes run at once on this node, for connection counts");

    private static final List<Setting<?>> SETTINGS = List.copyOf(DECLARED);

    private final Object[] values;
    private volatile boolean sealed;

    /** Every setting at its default. */
    public DaemonSettings() {
        values = new Object[SETTINGS.size()];
        SETTINGS.forEach(s -> values[s.index()] = s.defaultValue());
    }

    private DaemonSettings(DaemonSettings original) {
        values = original.values.clone();
        sealed = true;
    }

    private static <T> Setting<T> declare(String property, String key, Class<T> type, T defaultValue,
                                          Rule<T> rule, String description) {
        Setting<T> setting = new Setting<>(DECLARED.size(), property, key, type, defaultValue, rule.values(),
                rule.accepts(), description);
        DECLARED.add(setting);
        return setting;
    }

    /** Every daemon setting, in documentation order. */
    public static List<Setting<?>> settings() {
        return SETTINGS;
    }

    /** The value of {@code setting}. */
    public <T> T get(Setting<T> setting) {
        return setting.type().cast(values[setting.index()]);
    }

    /**
     * Sets {@code setting}.
     *
     * @throws ConfigurationException naming the setting and the value when the setting does not take it
     * @throws IllegalStateException  naming the setting once a store started on these settings
     */
    public <T> DaemonSettings set(Setting<T> setting, T value) {
        if (sealed) {
            throw new IllegalStateException("cannot set " + setting.property() + " (" + setting.key() + ") to "
                    + value + ": a store started on these settings, which are sealed; no daemon setting changes"
                    + " while its store runs, so build a new store with new settings");
        }
        String refusal = setting.refusal(value);
        if (refusal != null) {
            throw new ConfigurationException(setting.key() + " " + refusal + ", was: " + value);
        }
        values[setting.index()] = value;
        return this;
    }

    /**
     * Called by the runtime as a store starts: validates these settings, seals them (every setter then throws
     * {@link IllegalStateException}) and returns the copy the store runs on, which nobody else holds and which
     * is sealed too.
     *
     * @throws ConfigurationException naming the settings that disagree
     */
    public DaemonSettings sealForStart() {
        validate();
        DaemonSettings copy = new DaemonSettings(this);
        sealed = true;
        return copy;
    }

    /** Whether a store started on these settings, so that they refuse changes. */
    public boolean isSealed() {
        return sealed;
    }

    /**
     * Checks the settings against each other.
     *
     * @throws ConfigurationException naming the settings that disagree
     */
    public void validate() {
        List<String> problems = problems("");
        if (!problems.isEmpty()) {
            throw new ConfigurationException(String.join("; ", problems));
        }
    }

    /**
     * The settings that disagree with one another, one message each, naming every setting by
     * {@code keyPrefix} + its {@link Setting#key() key} and giving its value; empty when they agree.
     */
    public List<String> problems(String keyPrefix) {
        List<String> problems = new ArrayList<>();
        if (getForcedGapSkipThreshold().compareTo(getStaleSequenceThreshold()) <= 0) {
            problems.add(named(keyPrefix, FORCED_GAP_SKIP_THRESHOLD) + " must be longer than "
                    + named(keyPrefix, STALE_SEQUENCE_THRESHOLD));
        }
        if (isMonitoring() && getProbeTimeout().compareTo(getMonitoringInterval()) >= 0) {
            problems.add(named(keyPrefix, PROBE_TIMEOUT) + " must be shorter than "
                    + named(keyPrefix, MONITORING_INTERVAL) + ": shutdown waits behind an in-flight probe");
        }
        if (getMaxRetryBackoff().compareTo(getTransientRetryBackoff()) < 0) {
            problems.add(named(keyPrefix, MAX_RETRY_BACKOFF) + " must not be shorter than "
                    + named(keyPrefix, TRANSIENT_RETRY_BACKOFF));
        }
        return problems;
    }

    private String named(String keyPrefix, Setting<?> setting) {
        return keyPrefix + setting.key() + " (" + get(setting) + ")";
    }

    /**
     * How long the high water mark detector may go without finishing a cycle before liveness goes DOWN: three polling
     * intervals (the back-off after a failed read is capped by the longest of them and the retry back-off), plus the
     * longest a cycle may wait on the append fence and a lock probe.
     */
    public Duration detectorHeartbeatBound() {
        Duration polling = getPollingInterval();
        Duration slowestPause = polling.compareTo(getMaxRetryBackoff()) >= 0 ? polling : getMaxRetryBackoff();
        return slowestPause.multipliedBy(3).plus(getAppendFenceTimeout()).plus(getProbeTimeout());
    }

    /** Whether the lock monitor runs. */
    public boolean isMonitoring() {
        Duration interval = getMonitoringInterval();
        return !interval.isNegative() && !interval.isZero();
    }

    // The fluent setters and getters below are the setting declarations' Java face; see each declaration.

    /** See {@link #MODE}. */
    public DaemonSettings mode(DaemonMode mode) {
        return set(MODE, mode);
    }

    /** See {@link #POLLING_INTERVAL}; default 500 ms. */
    public DaemonSettings pollingInterval(Duration interval) {
        return set(POLLING_INTERVAL, interval);
    }

    /**
     * See {@link #STALE_SEQUENCE_THRESHOLD}; default 3 s. A hole is asked about its owner after one polling interval,
     * or after this when it is shorter.
     */
    public DaemonSettings staleSequenceThreshold(Duration threshold) {
        return set(STALE_SEQUENCE_THRESHOLD, threshold);
    }

    /** See {@link #APPEND_FENCE_TIMEOUT}: no longer waited for; default 1 s. */
    public DaemonSettings appendFenceTimeout(Duration timeout) {
        return set(APPEND_FENCE_TIMEOUT, timeout);
    }

    /** See {@link #FORCED_GAP_SKIP_THRESHOLD}; default 2 min. */
    public DaemonSettings forcedGapSkipThreshold(Duration threshold) {
        return set(FORCED_GAP_SKIP_THRESHOLD, threshold);
    }

    /**
     * See {@link #STOP_AND_DRAIN_TIMEOUT}; default 5 s. Zero or negative removes the bound: a wedged page then holds
     * up the stop indefinitely.
     */
    public DaemonSettings stopAndDrainTimeout(Duration timeout) {
        return set(STOP_AND_DRAIN_TIMEOUT, timeout);
    }

    /**
     * See {@link #MONITORING_INTERVAL}; default 5 s. Zero or negative starts no monitor, which reintroduces split
     * brain: a node that lost its session goes on running shards another node has taken.
     */
    public DaemonSettings monitoringInterval(Duration interval) {
        return set(MONITORING_INTERVAL, interval);
    }

    /** See {@link #PROBE_TIMEOUT}; default 3 s. */
    public DaemonSettings probeTimeout(Duration timeout) {
        return set(PROBE_TIMEOUT, timeout);
    }

    /** See {@link #LOCK_ACQUIRE_INTERVAL}; default 1 s. */
    public DaemonSettings lockAcquireInterval(Duration interval) {
        return set(LOCK_ACQUIRE_INTERVAL, interval);
    }

    /** See {@link #TENANT_LOAD_BUDGET_MEGABYTES}; 0 (the default) counts no bytes. */
    public DaemonSettings tenantLoadBudgetMegabytes(int megabytes) {
        return set(TENANT_LOAD_BUDGET_MEGABYTES, megabytes);
    }

    public int getTenantLoadBudgetMegabytes() {
        return get(TENANT_LOAD_BUDGET_MEGABYTES);
    }

    /** See {@link #TENANT_LOAD_BUDGET}; 0 (the default) is unbounded. */
    public DaemonSettings tenantLoadBudget(long events) {
        return set(TENANT_LOAD_BUDGET, events);
    }

    /** See {@link #TENANT_LOAD_MEMORY_THRESHOLD}; default 0.9. */
    public DaemonSettings tenantLoadMemoryThreshold(double fraction) {
        return set(TENANT_LOAD_MEMORY_THRESHOLD, fraction);
    }

    /** See {@link #MAX_CONCURRENT_EVENT_LOADS}; 0 (the default) is unbounded. */
    public DaemonSettings maxConcurrentEventLoadsPerDatabase(int loads) {
        return set(MAX_CONCURRENT_EVENT_LOADS, loads);
    }

    /** See {@link #MAX_CONCURRENT_BATCH_WRITES}; 0 (the default) is unbounded. */
    public DaemonSettings maxConcurrentBatchWritesPerDatabase(int writes) {
        return set(MAX_CONCURRENT_BATCH_WRITES, writes);
    }

    /**
     * See {@link #WORKER_THREADS}; default 4. With tenant-partitioned events a node runs one shard per (projection x
     * tenant), and this bounds how many of them load, apply and write concurrently; the load budget then bounds the
     * events they hold.
     */
    public DaemonSettings workerThreads(int threads) {
        return set(WORKER_THREADS, threads);
    }

    /** See {@link #BATCH_SIZE}; default 500. */
    public DaemonSettings batchSize(int batchSize) {
        return set(BATCH_SIZE, batchSize);
    }

    /** See {@link #MAX_BATCH_GROWTH}; default 10 (pages of up to 5,000 events at the default batch size). */
    public DaemonSettings maxBatchGrowth(int factor) {
        return set(MAX_BATCH_GROWTH, factor);
    }

    /** See {@link #REBUILD_BATCH_GROWTH}; default 100 (pages of 50,000 events at the default batch size). */
    public DaemonSettings rebuildBatchGrowth(int factor) {
        return set(REBUILD_BATCH_GROWTH, factor);
    }

    /** See {@link #DOCUMENT_CACHE_SIZE}; default 1,000 per shard. */
    public DaemonSettings documentCacheSize(int documents) {
        return set(DOCUMENT_CACHE_SIZE, documents);
    }

    /** See {@link #COMMIT_SIGNALS}; default on. */
    public DaemonSettings commitSignals(boolean on) {
        return set(COMMIT_SIGNALS, on);
    }

    /** See {@link #DOCUMENT_CACHE_MEGABYTES}; default 64 MiB for the whole store. */
    public DaemonSettings documentCacheMegabytes(int megabytes) {
        return set(DOCUMENT_CACHE_MEGABYTES, megabytes);
    }

    /** See {@link #SHARED_LOAD_MEGABYTES}; default 16 MiB for the whole store. */
    public DaemonSettings sharedLoadMegabytes(int megabytes) {
        return set(SHARED_LOAD_MEGABYTES, megabytes);
    }

    /** See {@link #ASYNC_PAGE_COMMITS}; default on. */
    public DaemonSettings asyncPageCommits(boolean on) {
        return set(ASYNC_PAGE_COMMITS, on);
    }

    /** See {@link #SHARED_TRANSACTIONS}; default off. */
    public DaemonSettings sharedTransactions(boolean on) {
        return set(SHARED_TRANSACTIONS, on);
    }

    /** See {@link #METRICS_PER_SHARD}; default off (per projection and database). */
    public DaemonSettings metricsPerShard(boolean on) {
        return set(METRICS_PER_SHARD, on);
    }

    /** See {@link #SKIP_APPLY_ERRORS}: on, a throwing apply dead-letters its event; off pauses the shard. */
    public DaemonSettings skipApplyErrors(boolean skip) {
        return set(SKIP_APPLY_ERRORS, skip);
    }

    /** See {@link #MAX_TRANSIENT_RETRIES}; default 5. */
    public DaemonSettings maxTransientRetries(int retries) {
        return set(MAX_TRANSIENT_RETRIES, retries);
    }

    /** See {@link #TRANSIENT_RETRY_BACKOFF}; default 100 ms. */
    public DaemonSettings transientRetryBackoff(Duration backoff) {
        return set(TRANSIENT_RETRY_BACKOFF, backoff);
    }

    /** See {@link #MAX_RETRY_BACKOFF}; default 5 s. */
    public DaemonSettings maxRetryBackoff(Duration backoff) {
        return set(MAX_RETRY_BACKOFF, backoff);
    }

    /** See {@link #STALLED_SHARD_THRESHOLD}; default 2 min. Keep it above your slowest page. */
    public DaemonSettings stalledShardThreshold(Duration threshold) {
        return set(STALLED_SHARD_THRESHOLD, threshold);
    }

    /** See {@link #OUTBOX_RETENTION}; default 1 h. */
    public DaemonSettings outboxRetention(Duration retention) {
        return set(OUTBOX_RETENTION, retention);
    }

    /** See {@link #OUTBOX_DELIVERY_TIMEOUT}; default 30 s. */
    public DaemonSettings outboxDeliveryTimeout(Duration timeout) {
        return set(OUTBOX_DELIVERY_TIMEOUT, timeout);
    }

    public Duration getOutboxDeliveryTimeout() {
        return get(OUTBOX_DELIVERY_TIMEOUT);
    }

    public DaemonMode getMode() {
        return get(MODE);
    }

    public Duration getPollingInterval() {
        return get(POLLING_INTERVAL);
    }

    public Duration getStaleSequenceThreshold() {
        return get(STALE_SEQUENCE_THRESHOLD);
    }

    public Duration getAppendFenceTimeout() {
        return get(APPEND_FENCE_TIMEOUT);
    }

    public Duration getForcedGapSkipThreshold() {
        return get(FORCED_GAP_SKIP_THRESHOLD);
    }

    public Duration getStopAndDrainTimeout() {
        return get(STOP_AND_DRAIN_TIMEOUT);
    }

    public Duration getMonitoringInterval() {
        return get(MONITORING_INTERVAL);
    }

    public Duration getProbeTimeout() {
        return get(PROBE_TIMEOUT);
    }

    public Duration getLockAcquireInterval() {
        return get(LOCK_ACQUIRE_INTERVAL);
    }

    public long getTenantLoadBudget() {
        return get(TENANT_LOAD_BUDGET);
    }

    public double getTenantLoadMemoryThreshold() {
        return get(TENANT_LOAD_MEMORY_THRESHOLD);
    }

    public int getMaxConcurrentEventLoadsPerDatabase() {
        return get(MAX_CONCURRENT_EVENT_LOADS);
    }

    public int getMaxConcurrentBatchWritesPerDatabase() {
        return get(MAX_CONCURRENT_BATCH_WRITES);
    }

    public int getWorkerThreads() {
        return get(WORKER_THREADS);
    }

    public int getBatchSize() {
        return get(BATCH_SIZE);
    }

    public int getMaxBatchGrowth() {
        return get(MAX_BATCH_GROWTH);
    }

    public int getRebuildBatchGrowth() {
        return get(REBUILD_BATCH_GROWTH);
    }

    public int getDocumentCacheSize() {
        return get(DOCUMENT_CACHE_SIZE);
    }

    public int getDocumentCacheMegabytes() {
        return get(DOCUMENT_CACHE_MEGABYTES);
    }

    public int getSharedLoadMegabytes() {
        return get(SHARED_LOAD_MEGABYTES);
    }

    public boolean isSharedTransactions() {
        return get(SHARED_TRANSACTIONS);
    }

    public boolean isAsyncPageCommits() {
        return get(ASYNC_PAGE_COMMITS);
    }

    public boolean isCommitSignals() {
        return get(COMMIT_SIGNALS);
    }

    public boolean isMetricsPerShard() {
        return get(METRICS_PER_SHARD);
    }

    public boolean isSkipApplyErrors() {
        return get(SKIP_APPLY_ERRORS);
    }

    public int getMaxTransientRetries() {
        return get(MAX_TRANSIENT_RETRIES);
    }

    public Duration getTransientRetryBackoff() {
        return get(TRANSIENT_RETRY_BACKOFF);
    }

    public Duration getMaxRetryBackoff() {
        return get(MAX_RETRY_BACKOFF);
    }

    public Duration getStalledShardThreshold() {
        return get(STALLED_SHARD_THRESHOLD);
    }

    public Duration getOutboxRetention() {
        return get(OUTBOX_RETENTION);
    }
}
