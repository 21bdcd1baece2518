package dev.ferret.runtime;

import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.daemon.DaemonExecutors;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.retry.TransientRetry;
import java.time.Clock;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * What a host plugs into a store: time, transactions and the daemon's executors. The SE defaults suit plain Java;
 * a Jakarta EE container supplies JTA and managed executors.
 *
 * @param clock        timestamps of events, documents and progression
 * @param transactions runs each unit of work and each daemon page in one transaction
 * @param executors    builds the daemon's executors for a given number of page workers; the scheduler must run
 *                     one task at a time (the detector's state has a single owner)
 * @param retries      builds each shard's retry of transient page failures
 * @param time         the daemon's deadlines, due times and bounded waits (drain, retry, lock and heartbeat rules)
 * @param metrics      what the daemon reports its work to; by default OpenTelemetry's global instance when the API is
 *                     on the class path
 */
public record StoreSeams(Clock clock, TransactionRunner transactions, IntFunction<DaemonExecutors> executors,
                         TransientRetry.Factory retries, TimeSource time, DaemonMetrics metrics) {

    public StoreSeams {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(transactions, "transactions");
        Objects.requireNonNull(executors, "executors");
        Objects.requireNonNull(retries, "retries");
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(metrics, "metrics");
    }

    /** With OpenTelemetry's global metrics when the API is on the class path. */
    public StoreSeams(Clock clock, TransactionRunner transactions, IntFunction<DaemonExecutors> executors,
                      TransientRetry.Factory retries, TimeSource time) {
        this(clock, transactions, executors, retries, time, DaemonMetrics.fromGlobalOpenTelemetry());
    }

    /** On the system's monotonic time. */
    public StoreSeams(Clock clock, TransactionRunner transactions, IntFunction<DaemonExecutors> executors,
                      TransientRetry.Factory retries) {
        this(clock, transactions, executors, retries, TimeSource.SYSTEM);
    }

    /** Keeps the Resilience4j retries. */
    public StoreSeams(Clock clock, TransactionRunner transactions, IntFunction<DaemonExecutors> executors) {
        this(clock, transactions, executors, TransientRetry.RESILIENCE4J, TimeSource.SYSTEM);
    }

    /** System UTC clock, JDBC transactions, daemon threads of the store's own, Resilience4j retries, system time. */
    public static StoreSeams defaults() {
        return new StoreSeams(Clock.systemUTC(), TransactionRunner.JDBC,
                workers -> DaemonExecutors.create("ferret", workers), TransientRetry.RESILIENCE4J, TimeSource.SYSTEM,
                DaemonMetrics.fromGlobalOpenTelemetry());
    }

    public StoreSeams withClock(Clock clock) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }

    public StoreSeams withTransactions(TransactionRunner transactions) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }

    public StoreSeams withExecutors(IntFunction<DaemonExecutors> executors) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }

    public StoreSeams withRetries(TransientRetry.Factory retries) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }

    public StoreSeams withTime(TimeSource time) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }

    public StoreSeams withMetrics(DaemonMetrics metrics) {
        return new StoreSeams(clock, transactions, executors, retries, time, metrics);
    }
}
