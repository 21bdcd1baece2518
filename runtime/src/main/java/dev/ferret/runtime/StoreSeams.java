package dev.ferret.runtime;

import dev.ferret.runtime.daemon.DaemonExecutors;
import dev.ferret.runtime.tx.TransactionRunner;
import java.time.Clock;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * What a host plugs into a store: time, transactions and the daemon's executors. The SE defaults suit plain Java;
 * a Jakarta EE container supplies JTA and managed executors.
 *
 * @param clock        timestamps of events, documents and progression
 * @param transactions runs each unit of work and each daemon page in one transaction
 * @param executors    builds the daemon's executors for a given number of page workers
 */
public record StoreSeams(Clock clock, TransactionRunner transactions, IntFunction<DaemonExecutors> executors) {

    public StoreSeams {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(transactions, "transactions");
        Objects.requireNonNull(executors, "executors");
    }

    /** System UTC clock, JDBC transactions, daemon threads of the store's own. */
    public static StoreSeams defaults() {
        return new StoreSeams(Clock.systemUTC(), TransactionRunner.JDBC,
                workers -> DaemonExecutors.create("ferret", workers));
    }

    public StoreSeams withClock(Clock clock) {
        return new StoreSeams(clock, transactions, executors);
    }

    public StoreSeams withTransactions(TransactionRunner transactions) {
        return new StoreSeams(clock, transactions, executors);
    }

    public StoreSeams withExecutors(IntFunction<DaemonExecutors> executors) {
        return new StoreSeams(clock, transactions, executors);
    }
}
