package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.ShardLockSession;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Session-owned {@code sp_getapplock}s on one kept connection; the probe asks {@code APPLOCK_MODE} for all. */
final class SqlServerShardLocks implements ShardLockSession {

    private static final Logger LOG = LoggerFactory.getLogger(SqlServerShardLocks.class);

    static final String TRY_LOCK = "{? = call sp_getapplock(?, 'Exclusive', 'Session', 0)}";
    static final String RELEASE = "{? = call sp_releaseapplock(?, 'Session')}";
    static final String PROBE = "SELECT value FROM OPENJSON(?)"
            + " WHERE APPLOCK_MODE('public', value, 'Session') <> 'NoLock'";

    private final Connection connection;
    private final Set<String> held = new LinkedHashSet<>();
    /** A release failed: which applocks the session still holds is unknown, so it must not go back to the pool. */
    private boolean uncertain;

    SqlServerShardLocks(DataSource dataSource) throws SQLException {
        this.connection = dataSource.getConnection();
        connection.setAutoCommit(true);
    }

    @Override
    public boolean tryLock(String lockName) throws SQLException {
        if (call(TRY_LOCK, lockName) >= 0) {
            held.add(lockName);
            return true;
        }
        return false;
    }

    /**
     * Forgets {@code lockName} only once the server confirmed the release; a failure leaves the session's locks
     * uncertain, so {@link #close()} will end the physical connection instead of pooling it.
     */
    @Override
    public void release(String lockName) throws SQLException {
        int result;
        try {
            result = call(RELEASE, lockName);
        } catch (SQLException | RuntimeException e) {
            uncertain = true;
            throw e;
        }
        if (result < 0) {
            uncertain = true;
            throw new SQLException("sp_releaseapplock on '" + lockName + "' returned " + result);
        }
        held.remove(lockName);
    }

    private int call(String sql, String lockName) throws SQLException {
        try (CallableStatement call = connection.prepareCall(sql)) {
            call.registerOutParameter(1, Types.INTEGER);
            call.setString(2, lockName);
            call.execute();
            return call.getInt(1);
        }
    }

    @Override
    public Set<String> probe(Collection<String> names, Duration timeout) throws SQLException {
        Set<String> stillHeld = new HashSet<>();
        // SQL Server has no statement timeout and a JDBC query timeout counts whole seconds; the network timeout
        // counts milliseconds. Running out of it ends the connection, and the session's applocks with it, which
        // is what a failed probe means anyway.
        int before = connection.getNetworkTimeout();
        connection.setNetworkTimeout(Runnable::run, Dialect.timeoutMillis(timeout));
        try (PreparedStatement ps = connection.prepareStatement(PROBE)) {
            ps.setString(1, SqlServerDialect.jsonArrayOf(new ArrayList<>(names)));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    stillHeld.add(rs.getString(1));
                }
            }
        } catch (SQLException | RuntimeException e) {
            try {
                connection.setNetworkTimeout(Runnable::run, before);
            } catch (SQLException restore) {
                e.addSuppressed(restore); // the connection is gone
            }
            throw e;
        }
        connection.setNetworkTimeout(Runnable::run, before);
        // a lock the server says this session lost is not released at close: releasing it would raise an error
        for (String name : names) {
            if (!stillHeld.contains(name)) {
                held.remove(name);
            }
        }
        return stillHeld;
    }

    @Override
    public long sessionId() throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT @@SPID");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Releases every lock still held, each on its own: one failure does not stop the others. If any release failed
     * (now or earlier), the session may still hold applocks, and a pooled connection keeps its session: the physical
     * connection is aborted instead of going back to the pool, which ends the session and its locks with it.
     */
    @Override
    public void close() {
        for (String name : new ArrayList<>(held)) {
            try {
                release(name);
            } catch (SQLException | RuntimeException e) {
                LOG.warn("Releasing shard lock {} failed ({}); the lock connection will be aborted", name,
                        e.toString());
            }
        }
        if (uncertain) {
            try {
                connection.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                LOG.warn("Aborting the lock connection failed ({})", e.toString());
            }
        }
        try {
            connection.close(); // after an abort: hands a closed connection back, which the pool discards
        } catch (SQLException e) {
            // safe: closing a connection that is gone already leaves nothing held
            LOG.debug("Closing the lock connection failed; it was gone already", e);
        }
    }
}
