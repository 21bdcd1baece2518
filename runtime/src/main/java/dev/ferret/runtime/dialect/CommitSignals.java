package dev.ferret.runtime.dialect;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A push from the database to every node that listens: events committed somewhere, look now. Where the engine has one
 * (PostgreSQL's LISTEN/NOTIFY, {@link Dialect#commitSignals}); polling stays the backstop, so a signal lost or never
 * sent only costs latency. One channel per store.
 */
public interface CommitSignals {

    /** The store's channel. */
    String channel();

    /** Signals every listener, on an auto-commit connection (delivered when the statement commits). */
    void send(Connection connection) throws SQLException;

    /** Starts listening on {@code connection}, which the caller keeps for it. */
    void listen(Connection connection) throws SQLException;

    /**
     * Waits up to {@code timeout} (at least a millisecond) for signals on a listening connection.
     *
     * @return whether one or more arrived
     */
    boolean await(Connection connection, Duration timeout) throws SQLException;

    /** Stops listening, before the connection goes back to its pool. */
    void unlisten(Connection connection) throws SQLException;
}
