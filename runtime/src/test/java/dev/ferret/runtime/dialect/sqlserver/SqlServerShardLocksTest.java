package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Lock release and connection hand-back of {@link SqlServerShardLocks}, without a server: the connection is a proxy
 * that plays sp_getapplock / sp_releaseapplock / APPLOCK_MODE from a set of held names.
 */
class SqlServerShardLocksTest {

    /** A scripted session: which applocks it holds, which releases fail, and what happened to the connection. */
    private static final class FakeSession {
        final Set<String> locks = new HashSet<>();
        final Set<String> failingReleases = new HashSet<>();
        final List<String> released = new ArrayList<>();
        boolean aborted;
        boolean closed;

        DataSource dataSource() {
            Connection connection = proxy(Connection.class, (p, m, args) -> switch (m.getName()) {
                case "prepareCall" -> callable((String) args[0]);
                case "prepareStatement" -> probe();
                case "abort" -> {
                    aborted = true;
                    yield null;
                }
                case "close" -> {
                    closed = true;
                    yield null;
                }
                case "getNetworkTimeout" -> 0;
                default -> null;
            });
            return proxy(DataSource.class, (p, m, args) -> m.getName().equals("getConnection") ? connection : null);
        }

        private CallableStatement callable(String sql) {
            String[] name = new String[1];
            int[] result = new int[1];
            return proxy(CallableStatement.class, (p, m, args) -> switch (m.getName()) {
                case "setString" -> {
                    name[0] = (String) args[1];
                    yield null;
                }
                case "execute" -> {
                    if (sql.equals(SqlServerShardLocks.TRY_LOCK)) {
                        result[0] = locks.add(name[0]) ? 0 : -1;
                    } else if (failingReleases.contains(name[0]) || !locks.remove(name[0])) {
                        // what the server does for a lock the session does not hold: error 1223
                        throw new SQLException("Cannot release the application lock", "S0001", 1223);
                    } else {
                        released.add(name[0]);
                    }
                    yield true;
                }
                case "getInt" -> result[0];
                default -> null;
            });
        }

        private PreparedStatement probe() {
            return proxy(PreparedStatement.class, (p, m, args) -> switch (m.getName()) {
                case "executeQuery" -> {
                    Iterator<String> rows = new ArrayList<>(locks).iterator();
                    String[] current = new String[1];
                    yield proxy(ResultSet.class, (r, rm, rargs) -> switch (rm.getName()) {
                        case "next" -> {
                            current[0] = rows.hasNext() ? rows.next() : null;
                            yield current[0] != null;
                        }
                        case "getString" -> current[0];
                        default -> null;
                    });
                }
                default -> null;
            });
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, InvocationHandler handler) {
        return (T) Proxy.newProxyInstance(SqlServerShardLocksTest.class.getClassLoader(), new Class<?>[] {type},
                handler);
    }

    @Test
    void closeReleasesEveryHeldLockAndReturnsTheConnectionWhenAllReleasesSucceed() throws SQLException {
        FakeSession session = new FakeSession();
        SqlServerShardLocks locks = new SqlServerShardLocks(session.dataSource());
        assertThat(locks.tryLock("a")).isTrue();
        assertThat(locks.tryLock("b")).isTrue();
        locks.close();
        assertThat(session.released).containsExactly("a", "b");
        assertThat(session.aborted).isFalse();
        assertThat(session.closed).isTrue();
    }

    @Test
    void oneFailedReleaseDoesNotStopTheOthersAndTheConnectionIsAbortedInsteadOfPooled() throws SQLException {
        FakeSession session = new FakeSession();
        SqlServerShardLocks locks = new SqlServerShardLocks(session.dataSource());
        locks.tryLock("a");
        locks.tryLock("b");
        locks.tryLock("c");
        session.failingReleases.add("a");
        locks.close();
        assertThat(session.released).containsExactly("b", "c");
        assertThat(session.aborted).isTrue();
        assertThat(session.closed).isTrue();
    }

    @Test
    void anEarlierFailedReleaseAlsoMakesCloseAbortTheConnection() throws SQLException {
        FakeSession session = new FakeSession();
        SqlServerShardLocks locks = new SqlServerShardLocks(session.dataSource());
        locks.tryLock("a");
        session.failingReleases.add("a");
        assertThatThrownBy(() -> locks.release("a")).isInstanceOf(SQLException.class);
        session.failingReleases.clear();
        locks.close();
        // still held after the failure, so released at close; the session stays suspect all the same
        assertThat(session.released).containsExactly("a");
        assertThat(session.aborted).isTrue();
    }

    @Test
    void locksTheProbeFoundLostAreNotReleasedAtCloseAndTheConnectionIsPooled() throws SQLException {
        FakeSession session = new FakeSession();
        SqlServerShardLocks locks = new SqlServerShardLocks(session.dataSource());
        locks.tryLock("a");
        locks.tryLock("b");
        session.locks.remove("a"); // lost behind the node's back (a DBA's KILL of an earlier session, say)
        assertThat(locks.probe(List.of("a", "b"), Duration.ofSeconds(1))).containsExactly("b");
        locks.close();
        assertThat(session.released).containsExactly("b");
        assertThat(session.aborted).isFalse();
        assertThat(session.closed).isTrue();
    }
}
