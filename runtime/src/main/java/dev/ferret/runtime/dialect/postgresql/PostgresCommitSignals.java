package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.runtime.dialect.CommitSignals;
import dev.ferret.runtime.dialect.TableNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * LISTEN/NOTIFY on one channel per store, named after its schema and table prefix. A signal is sent after the append
 * committed, on a connection of its own, never in the append's transaction: a transaction that ran NOTIFY cannot be
 * prepared, and an application server's two-phase commit would fail. The payload is empty, so PostgreSQL folds the
 * signals of one transaction into one; listeners read the mark themselves.
 */
final class PostgresCommitSignals implements CommitSignals {

    /** PostgreSQL's identifier length. */
    private static final int MAX_CHANNEL = 63;

    private final String channel;

    PostgresCommitSignals(TableNames names) {
        // schema and prefix are validated identifiers: lower-case letters, digits and underscores
        String name = ("ferret_" + names.schema() + "_" + names.prefix() + "events").toLowerCase(Locale.ROOT);
        this.channel = name.length() <= MAX_CHANNEL ? name
                : name.substring(0, MAX_CHANNEL - 9) + "_" + String.format("%08x", name.hashCode());
    }

    @Override
    public String channel() {
        return channel;
    }

    @Override
    public void send(Connection connection) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_notify(?, '')")) {
            ps.setString(1, channel);
            ps.execute();
        }
    }

    @Override
    public void listen(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("LISTEN " + channel);
        }
    }

    @Override
    public boolean await(Connection connection, Duration timeout) throws SQLException {
        // 0 would wait for ever: every wait here has a bound
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        PGNotification[] received = connection.unwrap(PGConnection.class).getNotifications(millis);
        return received != null && received.length > 0;
    }

    @Override
    public void unlisten(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("UNLISTEN " + channel);
        }
    }
}
