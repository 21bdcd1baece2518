package dev.ferret.daemon;

import dev.ferret.ConfigurationException;
import java.time.Duration;
import java.util.Objects;

/** How the async daemon runs. Every setter validates and names the setting and value it refuses. */
public final class DaemonSettings {

    private DaemonMode mode = DaemonMode.DISABLED;
    private Duration pollingInterval = Duration.ofMillis(500);
    private Duration staleSequenceThreshold = Duration.ofSeconds(3);
    private Duration appendFenceTimeout = Duration.ofSeconds(1);
    private Duration forcedGapSkipThreshold = Duration.ofMinutes(2);
    private int batchSize = 500;
    private int workerThreads = 4;
    private long tenantLoadBudget;
    private double tenantLoadMemoryThreshold = 0.9;
    private int maxConcurrentEventLoadsPerDatabase;
    private int maxConcurrentBatchWritesPerDatabase;
    private Duration monitoringInterval = Duration.ofSeconds(5);
    private Duration probeTimeout = Duration.ofSeconds(3);
    private Duration lockAcquireInterval = Duration.ofSeconds(1);
    private Duration stopAndDrainTimeout = Duration.ofSeconds(5);
    private boolean skipApplyErrors;
    private int maxTransientRetries = 5;
    private Duration transientRetryBackoff = Duration.ofMillis(100);
    private Duration maxRetryBackoff = Duration.ofSeconds(5);
    private Duration stalledShardThreshold = Duration.ofMinutes(2);
    private Duration outboxRetention = Duration.ofHours(1);

    public DaemonSettings mode(DaemonMode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
        return this;
    }

    /** How often the high water mark detector reads the event log when nothing moved; default 500 ms. */
    public DaemonSettings pollingInterval(Duration interval) {
        this.pollingInterval = positive("daemon.polling-interval", interval);
        return this;
    }

    /**
     * How long a hole whose append is still open may hold the mark before the status reports it stalled; default
     * 3 s. A hole is asked about its owner after one polling interval, or after this when it is shorter.
     */
    public DaemonSettings staleSequenceThreshold(Duration threshold) {
        this.staleSequenceThreshold = positive("daemon.stale-sequence-threshold", threshold);
        return this;
    }

    /**
     * No longer waited for: holes are resolved by asking their owners, and there is no append fence. Kept so that
     * configurations setting it still start; it still counts into {@link #detectorHeartbeatBound()}. Default 1 s.
     */
    public DaemonSettings appendFenceTimeout(Duration timeout) {
        this.appendFenceTimeout = positive("daemon.append-fence-timeout", timeout);
        return this;
    }

    /**
     * How long a stalled gap may hold the mark before the detector skips it anyway, logging the range; default
     * 2 min. Events that commit into a forced skip are not projected, so keep it well above your longest append
     * transaction.
     */
    public DaemonSettings forcedGapSkipThreshold(Duration threshold) {
        this.forcedGapSkipThreshold = positive("daemon.forced-gap-skip-threshold", threshold);
        return this;
    }

    /**
     * How long stopping a shard waits for its page in flight to finish and mark progression before cancelling it
     * (rolled back, re-processed by the next owner); default 5 s. Applies to stopping one shard, stopping all (in
     * parallel: all shards drain within one bound) and restarts. Zero or negative removes the bound: a wedged page
     * then holds up the stop indefinitely.
     */
    public DaemonSettings stopAndDrainTimeout(Duration timeout) {
        this.stopAndDrainTimeout = java.util.Objects.requireNonNull(timeout, "projections.stop-and-drain-timeout");
        return this;
    }

    public Duration getStopAndDrainTimeout() {
        return stopAndDrainTimeout;
    }

    /**
     * HotCold: how often the lock monitor asks the database which shard locks this node still holds, stopping the
     * shards whose lock is gone; default 5 s. Zero or negative starts no monitor, which reintroduces split brain: a
     * node that lost its session goes on running shards another node has taken.
     */
    public DaemonSettings monitoringInterval(Duration interval) {
        this.monitoringInterval = java.util.Objects.requireNonNull(interval, "daemon.lock.monitoring-interval");
        return this;
    }

    /** HotCold: the bound on one lock probe, and so on shutdown waiting behind one; default 3 s. */
    public DaemonSettings probeTimeout(Duration timeout) {
        this.probeTimeout = positive("daemon.lock.probe-timeout", timeout);
        return this;
    }

    /** HotCold: how often a node tries to take the shards nobody holds; default 1 s. */
    public DaemonSettings lockAcquireInterval(Duration interval) {
        this.lockAcquireInterval = positive("daemon.lock.acquire-interval", interval);
        return this;
    }

    public Duration getMonitoringInterval() {
        return monitoringInterval;
    }

    /** Whether the lock monitor runs. */
    public boolean isMonitoring() {
        return !monitoringInterval.isNegative() && !monitoringInterval.isZero();
    }

    public Duration getProbeTimeout() {
        return probeTimeout;
    }

    public Duration getLockAcquireInterval() {
        return lockAcquireInterval;
    }

    /**
     * The most events this node's agents may have loaded but not committed; 0 (the default) is unbounded. Agents
     * wait for room in one FIFO line; a load is always allowed when nothing is in flight.
     */
    public DaemonSettings tenantLoadBudget(long events) {
        if (events < 0) {
            throw new ConfigurationException("daemon.tenant-load-budget must be 0 (unbounded) or more, was: " + events);
        }
        this.tenantLoadBudget = events;
        return this;
    }

    /**
     * With a budget: when used heap after GC passes this fraction of the maximum, no new page is let in until the
     * work in flight drains; default 0.9.
     */
    public DaemonSettings tenantLoadMemoryThreshold(double fraction) {
        if (!(fraction > 0 && fraction <= 1)) {
            throw new ConfigurationException("daemon.tenant-load-memory-threshold must be in (0, 1], was: " + fraction);
        }
        this.tenantLoadMemoryThreshold = fraction;
        return this;
    }

    /** At most this many page loads run at once on this node; 0 (the default) is unbounded. */
    public DaemonSettings maxConcurrentEventLoadsPerDatabase(int loads) {
        if (loads < 0) {
            throw new ConfigurationException("daemon.max-concurrent-event-loads must be 0 or more, was: " + loads);
        }
        this.maxConcurrentEventLoadsPerDatabase = loads;
        return this;
    }

    /** At most this many page writes run at once on this node; 0 (the default) is unbounded. */
    public DaemonSettings maxConcurrentBatchWritesPerDatabase(int writes) {
        if (writes < 0) {
            throw new ConfigurationException("daemon.max-concurrent-batch-writes must be 0 or more, was: " + writes);
        }
        this.maxConcurrentBatchWritesPerDatabase = writes;
        return this;
    }

    public long getTenantLoadBudget() {
        return tenantLoadBudget;
    }

    public double getTenantLoadMemoryThreshold() {
        return tenantLoadMemoryThreshold;
    }

    public int getMaxConcurrentEventLoadsPerDatabase() {
        return maxConcurrentEventLoadsPerDatabase;
    }

    public int getMaxConcurrentBatchWritesPerDatabase() {
        return maxConcurrentBatchWritesPerDatabase;
    }

    /**
     * How many shards may work on a page at once on this node (the page workers); default 4. With tenant-partitioned
     * events a node runs one shard per (projection x tenant), and this bounds how many of them load, apply and
     * write concurrently; the load budget then bounds the events they hold.
     */
    public DaemonSettings workerThreads(int threads) {
        if (threads < 1 || threads > 1024) {
            throw new ConfigurationException("daemon.worker-threads must be 1-1024, was: " + threads);
        }
        this.workerThreads = threads;
        return this;
    }

    public int getWorkerThreads() {
        return workerThreads;
    }

    /** Events per page; default 500. */
    public DaemonSettings batchSize(int batchSize) {
        if (batchSize < 1 || batchSize > 100_000) {
            throw new ConfigurationException("daemon.batch-size must be 1-100000, was: " + batchSize);
        }
        this.batchSize = batchSize;
        return this;
    }

    /** When on, an event whose apply throws goes to the dead letters and the shard goes on; off pauses it. */
    public DaemonSettings skipApplyErrors(boolean skip) {
        this.skipApplyErrors = skip;
        return this;
    }

    /** Retries of a page that failed on a transient database error, before the shard backs off; default 5. */
    public DaemonSettings maxTransientRetries(int retries) {
        if (retries < 0 || retries > 100) {
            throw new ConfigurationException("daemon.max-transient-retries must be 0-100, was: " + retries);
        }
        this.maxTransientRetries = retries;
        return this;
    }

    /** First backoff after a transient failure, doubled per retry up to {@link #maxRetryBackoff}; 100 ms. */
    public DaemonSettings transientRetryBackoff(Duration backoff) {
        this.transientRetryBackoff = positive("daemon.transient-retry-backoff", backoff);
        return this;
    }

    /** Longest backoff between retries while the database is unreachable; default 5 s. */
    public DaemonSettings maxRetryBackoff(Duration backoff) {
        this.maxRetryBackoff = positive("daemon.max-retry-backoff", backoff);
        return this;
    }

    /**
     * How long a shard that should run may stay behind its mark without committing a page before the daemon reports
     * it stalled and liveness goes DOWN; default 2 min. Keep it above your slowest page (load, apply and commit).
     */
    public DaemonSettings stalledShardThreshold(Duration threshold) {
        this.stalledShardThreshold = positive("daemon.stalled-shard-threshold", threshold);
        return this;
    }

    public Duration getStalledShardThreshold() {
        return stalledShardThreshold;
    }

    /**
     * How long a delivered side-effect message stays in the outbox table (for an operator tracing a delivery)
     * before the dispatcher deletes it; default 1 h. Undelivered messages are never deleted.
     */
    public DaemonSettings outboxRetention(Duration retention) {
        this.outboxRetention = positive("daemon.outbox-retention", retention);
        return this;
    }

    public Duration getOutboxRetention() {
        return outboxRetention;
    }

    /**
     * How long the high water mark detector may go without finishing a cycle before liveness goes DOWN: three polling
     * intervals (the back-off after a failed read is capped by the longest of them and the retry back-off), plus the
     * longest a cycle may wait on the append fence and a lock probe.
     */
    public Duration detectorHeartbeatBound() {
        Duration slowestPause = pollingInterval.compareTo(maxRetryBackoff) >= 0 ? pollingInterval : maxRetryBackoff;
        return slowestPause.multipliedBy(3).plus(appendFenceTimeout).plus(probeTimeout);
    }

    /**
     * Checks the settings against each other.
     *
     * @throws ConfigurationException naming the settings that disagree
     */
    public void validate() {
        if (forcedGapSkipThreshold.compareTo(staleSequenceThreshold) <= 0) {
            throw new ConfigurationException("daemon.forced-gap-skip-threshold (" + forcedGapSkipThreshold
                    + ") must be longer than daemon.stale-sequence-threshold (" + staleSequenceThreshold + ")");
        }
        if (isMonitoring() && probeTimeout.compareTo(monitoringInterval) >= 0) {
            throw new ConfigurationException("daemon.lock.probe-timeout (" + probeTimeout
                    + ") must be shorter than daemon.lock.monitoring-interval (" + monitoringInterval
                    + "): shutdown waits behind an in-flight probe");
        }
        if (maxRetryBackoff.compareTo(transientRetryBackoff) < 0) {
            throw new ConfigurationException("daemon.max-retry-backoff (" + maxRetryBackoff
                    + ") must not be shorter than daemon.transient-retry-backoff (" + transientRetryBackoff + ")");
        }
    }

    private static Duration positive(String key, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new ConfigurationException(key + " must be a positive duration, was: " + value);
        }
        return value;
    }

    public DaemonMode getMode() {
        return mode;
    }

    public Duration getPollingInterval() {
        return pollingInterval;
    }

    public Duration getStaleSequenceThreshold() {
        return staleSequenceThreshold;
    }

    public Duration getAppendFenceTimeout() {
        return appendFenceTimeout;
    }

    public Duration getForcedGapSkipThreshold() {
        return forcedGapSkipThreshold;
    }

    public int getBatchSize() {
        return batchSize;
    }

    public boolean isSkipApplyErrors() {
        return skipApplyErrors;
    }

    public int getMaxTransientRetries() {
        return maxTransientRetries;
    }

    public Duration getTransientRetryBackoff() {
        return transientRetryBackoff;
    }

    public Duration getMaxRetryBackoff() {
        return maxRetryBackoff;
    }
}
