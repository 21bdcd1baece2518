package dev.ferret.runtime.tx;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;

/**
 * Runs work in one database transaction: every write of a unit of work or a daemon page, and the page's
 * progression, commit or roll back together. The SE default drives the JDBC connection; a container supplies one
 * that begins and ends a JTA transaction around a connection enlisted in it.
 */
public interface TransactionRunner {

    /** Work on a connection whose transaction the runner owns: it must not commit, roll back or close it. */
    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Runs {@code work} once: commits when it returns, rolls back when it throws (and rethrows). Retrying is not the
     * runner's job; transient failures of daemon pages are retried around the whole page by
     * {@code TransientRetry}.
     */
    <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException;

    /** Local JDBC transactions: auto-commit off, commit or roll back, auto-commit restored. */
    TransactionRunner JDBC = new TransactionRunner() {
        @Override
        public <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException {
            try (Connection connection = dataSource.getConnection()) {
                boolean autoCommit = connection.getAutoCommit();
                connection.setAutoCommit(false);
                try {
                    T result = work.run(connection);
                    connection.commit();
                    return result;
                } catch (SQLException | RuntimeException | Error e) {
                    try {
                        connection.rollback();
                    } catch (SQLException rollbackFailure) {
                        e.addSuppressed(rollbackFailure);
                    }
                    throw e;
                } finally {
                    restore(connection, autoCommit);
                }
            }
        }

        private void restore(Connection connection, boolean autoCommit) {
            try {
                connection.setAutoCommit(autoCommit);
            } catch (SQLException e) {
                // safe: a broken connection is discarded by the pool anyway
                LoggerFactory.getLogger(TransactionRunner.class)
                        .debug("Restoring auto-commit failed; the pool discards the broken connection", e);
            }
        }

        @Override
        public String toString() {
            return "JDBC transactions";
        }
    };
}
