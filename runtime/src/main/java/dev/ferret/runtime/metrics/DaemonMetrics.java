package dev.ferret.runtime.metrics;

import dev.ferret.EventEnvelope;
import dev.ferret.daemon.DaemonStatus;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * What the async daemon reports as it works: counts and durations of its pages, retries and dead letters, and
 * (through {@link #observe}) its state at each collection; and where query sessions read when a database has a read
 * replica. Every method but {@link #replicaRead} is called from the daemon's own threads; none may block;
 * {@link #NONE} records nothing. The metric names are listed in {@link OpenTelemetryMetrics}.
 */
public interface DaemonMetrics {

    DaemonMetrics NONE = new DaemonMetrics() {
    };

    /**
     * A page of {@code shard} committed after {@code duration} (load to commit), applying {@code events}; unless
     * {@code replaying} (a rebuild, whose latency says nothing of the live flow), each event's time from its append
     * to {@code visibleAt} counts as its append-to-visible latency.
     */
    default void pageCommitted(ShardLabel shard, List<EventEnvelope> events, Duration duration,
                               OffsetDateTime visibleAt, boolean replaying) {
    }

    /** {@code shard} backs off from a transient failure. */
    default void retried(ShardLabel shard) {
    }

    /** {@code shard} wrote {@code count} dead letters in a page that committed. */
    default void deadLettered(ShardLabel shard, int count) {
    }

    /**
     * A query session read {@code database}, which has a read replica, from where {@code route} says; called from
     * the application's threads, so it must not block.
     */
    default void replicaRead(String database, ReadRoute route) {
    }

    /**
     * Observes {@code status} at each collection of the gauges (lag and progression, shards by state, the mark and
     * the sequences it skipped) until the returned handle is closed; {@code status} must be cheap and never block.
     * {@code perShard}: the gauges are each shard's, else each projection's and database's.
     */
    default AutoCloseable observe(Supplier<DaemonStatus> status, boolean perShard) {
        return () -> { };
    }

    /**
     * OpenTelemetry's global instance when the API is on the class path (a no-op until the application installs an
     * SDK), nothing otherwise.
     */
    static DaemonMetrics fromGlobalOpenTelemetry() {
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, DaemonMetrics.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            LoggerFactory.getLogger(DaemonMetrics.class).debug("No OpenTelemetry API on the class path: no metrics");
            return NONE;
        }
        return OpenTelemetryMetrics.global();
    }
}
