package dev.ferret.runtime.context;

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

    /**
     * A unit of work an application asked for ({@code saveChanges()}): in the transaction active on the calling
     * thread when the runner can join one (JTA: the caller's {@code @Transactional} method), so it commits or rolls
     * back with the caller's other work; otherwise as {@link #inTransaction}. {@code afterEnd} runs once the
     * transaction holding the work has ended, committed or rolled back: at once here, at the caller's commit when
     * joined. A failure of {@code work} in a joined transaction marks it rollback-only.
     */
    default <T> T inCallersTransaction(DataSource dataSource, Work<T> work, Runnable afterEnd) throws SQLException {
        try {
            return inTransaction(dataSource, work);
        } finally {
            afterEnd.run();
        }
    }

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
