package dev.ferret.runtime.dialect;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/**
 * Session-scoped shard locks for HotCold ownership, held on connections kept for them: when the database ends the
 * session (failover, a killed session), every lock goes with it. Not thread-safe: one owner (the node's lock
 * keeper) uses it. There is no release timeout: a release runs to completion on the lock's own connection, because
 * a pooled connection keeps its session, and its locks, when it is returned.
 */
public interface ShardLockSession extends AutoCloseable {

    /** Takes {@code lockName} if no other session holds it, without waiting more than a moment. */
    boolean tryLock(String lockName) throws SQLException;

    void release(String lockName) throws SQLException;

    /**
     * Which of {@code held} the database says this session still holds, in one round trip where the engine allows,
     * bounded by {@code timeout}. A lost session answers with an exception or an empty set.
     */
    Set<String> probe(Collection<String> held, Duration timeout) throws SQLException;

    /** The database's id of the lock session (backend pid, SPID, H2 session id) for logs and operators. */
    long sessionId() throws SQLException;

    /** Releases everything by ending the session's connections. */
    @Override
    void close();
}
