package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.runtime.dialect.AdvisoryLockKeys;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.ShardLockSession;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Session advisory locks on one kept connection, keyed by {@link AdvisoryLockKeys#keyOf}. */
final class PostgresShardLocks implements ShardLockSession {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresShardLocks.class);

    static final String TRY_LOCK = "SELECT pg_try_advisory_lock(?)";
    static final String UNLOCK = "SELECT pg_advisory_unlock(?)";
    static final String UNLOCK_ALL = "SELECT pg_advisory_unlock_all()";
    /** A bigint advisory key shows in pg_locks as classid (high half) and objid (low half), objsubid 1. */
    static final String PROBE = "SELECT classid, objid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1"
            + " AND granted AND pid = pg_backend_pid()";

    /**
     * Bounds the probe on the server, to the millisecond (a JDBC query timeout counts whole seconds). Local to the
     * probe's transaction: the connection goes back to the pool one day and must not take the bound with it.
     */
    static final String PROBE_TIMEOUT = "SELECT set_config('statement_timeout', ?, true)";

    private final Connection connection;

    PostgresShardLocks(DataSource dataSource) throws SQLException {
        this.connection = dataSource.getConnection();
        connection.setAutoCommit(true);
    }

    @Override
    public boolean tryLock(String lockName) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(TRY_LOCK)) {
            ps.setLong(1, AdvisoryLockKeys.keyOf(lockName));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    @Override
    public void release(String lockName) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(UNLOCK)) {
            ps.setLong(1, AdvisoryLockKeys.keyOf(lockName));
            ps.execute();
        }
    }

    @Override
    public Set<String> probe(Collection<String> held, Duration timeout) throws SQLException {
        Map<Long, String> byKey = new HashMap<>();
        held.forEach(name -> byKey.put(AdvisoryLockKeys.keyOf(name), name));
        Set<String> stillHeld = new HashSet<>();
        // session advisory locks outlive the transaction, whether it commits or rolls back
        connection.setAutoCommit(false);
        try {
            try (PreparedStatement ps = connection.prepareStatement(PROBE_TIMEOUT)) {
                ps.setString(1, statementTimeout(timeout));
                ps.execute();
            }
            try (PreparedStatement ps = connection.prepareStatement(PROBE);
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long key = (rs.getLong(1) << 32) | (rs.getLong(2) & 0xFFFFFFFFL);
                    String name = byKey.get(key);
                    if (name != null) {
                        stillHeld.add(name);
                    }
                }
            }
            connection.commit();
        } catch (SQLException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            restoreAutoCommit(e);
            throw e;
        }
        restoreAutoCommit(null);
        return stillHeld;
    }

    /** The value of {@code statement_timeout} for {@code timeout}, in milliseconds: {@code 300ms}. */
    static String statementTimeout(Duration timeout) {
        return Dialect.timeoutMillis(timeout) + "ms";
    }

    /** Back to autocommit; a failure to do so is added to {@code failure}, or thrown when there is none. */
    private void restoreAutoCommit(Exception failure) throws SQLException {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    @Override
    public long sessionId() throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_backend_pid()");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    public void close() {
        try (PreparedStatement ps = connection.prepareStatement(UNLOCK_ALL)) {
            // a pooled connection keeps its session: its locks must not travel back into the pool
            ps.execute();
        } catch (SQLException e) {
            // safe: a session that cannot run the unlock is gone, and its locks with it
            LOG.debug("Unlocking every advisory lock on close failed; the session is gone with its locks", e);
        }
        try {
            connection.close();
        } catch (SQLException e) {
            // safe: closing a connection that is gone already leaves nothing held
            LOG.debug("Closing the lock connection failed; it was gone already", e);
        }
    }
}
