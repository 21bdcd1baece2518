package dev.ferret.runtime.dialect.h2;

import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.ShardLockSession;
import dev.ferret.runtime.dialect.TableNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * H2 has no named locks. Each held shard lock is a row of {@code pc_shard_locks} locked {@code FOR UPDATE} by an
 * open transaction on a connection of its own: another session cannot take it, and it dies with that session.
 */
final class H2ShardLocks implements ShardLockSession {

    private static final Logger LOG = LoggerFactory.getLogger(H2ShardLocks.class);

    private static final int LOCK_TIMEOUT_ERROR = 50200;
    private static final int DUPLICATE_KEY = 23505;

    private final DataSource dataSource;
    private final String ensureRow;
    private final String lockRow;
    private final Map<String, Connection> held = new HashMap<>();

    H2ShardLocks(DataSource dataSource, TableNames names) {
        this.dataSource = dataSource;
        String table = names.schema() + "." + names.local("shard_locks");
        // a plain read does not wait on the row lock another node holds; MERGE would
        this.ensureRow = "INSERT INTO " + table + " (name) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM " + table
                + " WHERE name = ?)";
        this.lockRow = "SELECT name FROM " + table + " WHERE name = ? FOR UPDATE";
    }

    @Override
    public boolean tryLock(String lockName) throws SQLException {
        if (held.containsKey(lockName)) {
            return true;
        }
        Connection connection = dataSource.getConnection();
        try {
            try (Statement s = connection.createStatement()) {
                s.execute("SET LOCK_TIMEOUT 100");
            }
            try (PreparedStatement ps = connection.prepareStatement(ensureRow)) {
                ps.setString(1, lockName);
                ps.setString(2, lockName);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (e.getErrorCode() != DUPLICATE_KEY) {
                    throw e;
                }
                // another node created the row at the same moment
            }
            connection.setAutoCommit(false);
            try (PreparedStatement ps = connection.prepareStatement(lockRow)) {
                ps.setString(1, lockName);
                ps.executeQuery().close();
            }
            held.put(lockName, connection);
            return true;
        } catch (SQLException e) {
            closeQuietly(connection);
            if (e.getErrorCode() == LOCK_TIMEOUT_ERROR) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void release(String lockName) {
        Connection connection = held.remove(lockName);
        if (connection != null) {
            closeQuietly(connection);
        }
    }

    @Override
    public Set<String> probe(Collection<String> names, Duration timeout) throws SQLException {
        // H2 ignores the timeout of isValid and has no network timeout. Embedded, a check never waits; over TCP the
        // bound is kept to the millisecond between checks, and a probe that ran past it fails as on other engines.
        int millis = Dialect.timeoutMillis(timeout);
        // real time on purpose: this bounds a database round trip, not a daemon deadline
        long start = System.nanoTime();
        Set<String> stillHeld = new HashSet<>();
        for (String name : names) {
            Connection connection = held.get(name);
            try {
                if (connection != null && connection.isValid(1)) {
                    stillHeld.add(name);
                }
            } catch (SQLException e) {
                // safe: a lock whose connection cannot answer is lost with its session; it is reported as not held
                LOG.debug("Probing the lock {} failed; counting it as lost", name, e);
            }
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            if (elapsed > millis) {
                throw new SQLTimeoutException("the probe of " + names.size() + " H2 shard locks took " + elapsed
                        + " ms, past its timeout of " + millis + " ms (daemon.lock.probe-timeout)");
            }
        }
        return stillHeld;
    }

    @Override
    public long sessionId() throws SQLException {
        if (held.isEmpty()) {
            return -1;
        }
        return sessionId(held.values().iterator().next());
    }

    /** The H2 session holding {@code lockName}, or -1. */
    long sessionIdOf(String lockName) throws SQLException {
        Connection connection = held.get(lockName);
        return connection == null ? -1 : sessionId(connection);
    }

    private static long sessionId(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT SESSION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    public void close() {
        held.values().forEach(H2ShardLocks::closeQuietly);
        held.clear();
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            // safe: a connection that cannot roll back is gone, and its locks with it
            LOG.debug("Rolling back a released lock connection failed; it is closed next", e);
        }
        try {
            connection.close();
        } catch (SQLException e) {
            // safe: closing a connection that is gone already leaves nothing held
            LOG.debug("Closing a released lock connection failed; it was gone already", e);
        }
    }
}
