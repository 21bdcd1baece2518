package dev.ferret.runtime.dialect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DatabaseEngine;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Session-scoped shard locks on real sessions: exclusive, probed, released, and gone with a killed session. */
@Tag("conformance")
class ShardLockConformanceTest {

    private static final Duration PROBE = Duration.ofSeconds(5);

    private static Set<String> probe(ShardLockSession session, String... names) {
        try {
            return session.probe(List.of(names), PROBE);
        } catch (SQLException e) {
            return Set.of(); // a lost session holds nothing
        }
    }

    @Test
    void aLockIsExclusiveProbedAndReleased() throws Exception {
        try (TestDatabase db = TestDatabase.create("locks");
             FerretDocumentStore store = (FerretDocumentStore) Ferret.createStore(db.options(), StoreSeams.defaults())) {
            Dialect dialect = store.dialect();
            String a = Dialect.shardLockName(store.names(), "Orders:All");
            String b = Dialect.shardLockName(store.names(), "Trips:All");
            try (ShardLockSession node1 = dialect.openShardLocks(store.dataSource(), store.names());
                 ShardLockSession node2 = dialect.openShardLocks(store.dataSource(), store.names())) {
                assertThat(node1.tryLock(a)).isTrue();
                assertThat(node2.tryLock(a)).isFalse();
                assertThat(node2.tryLock(b)).isTrue();
                assertThat(probe(node1, a, b)).containsExactly(a);
                assertThat(probe(node2, a, b)).containsExactly(b);

                node1.release(a);
                assertThat(probe(node1, a)).isEmpty();
                assertThat(node2.tryLock(a)).isTrue();
            }
            try (ShardLockSession after = dialect.openShardLocks(store.dataSource(), store.names())) {
                // closing a session gave its locks back even though its connections went back to the pool
                assertThat(after.tryLock(a)).isTrue();
                assertThat(after.tryLock(b)).isTrue();
            }
        }
    }

    @Test
    void killingTheLockSessionFreesItsLocksAndTheProbeSeesThem() throws Exception {
        try (TestDatabase db = TestDatabase.create("lockkill");
             FerretDocumentStore store = (FerretDocumentStore) Ferret.createStore(db.options(), StoreSeams.defaults())) {
            Dialect dialect = store.dialect();
            String shard = Dialect.shardLockName(store.names(), "Orders:All");
            try (ShardLockSession node1 = dialect.openShardLocks(store.dataSource(), store.names());
                 ShardLockSession node2 = dialect.openShardLocks(store.dataSource(), store.names())) {
                assertThat(node1.tryLock(shard)).isTrue();
                long session = node1.sessionId();
                if (db.engine() == DatabaseEngine.POSTGRESQL) {
                    assertThat(db.queryLong("SELECT count(*) FROM pg_stat_activity WHERE pid = " + session)).isOne();
                }
                db.killSession(session); // pg_terminate_backend, ABORT_SESSION or KILL, per engine
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
                        .until(() -> probe(node1, shard).isEmpty());
                assertThat(node2.tryLock(shard)).isTrue();
            }
        }
    }

    @Test
    void aProbeBlockedOnTheServerGivesUpAtItsTimeoutInMillisecondsNotWholeSeconds() throws Exception {
        try (TestDatabase db = TestDatabase.create("lockprobe");
             FerretDocumentStore store = (FerretDocumentStore) Ferret.createStore(db.options(), StoreSeams.defaults())) {
            Dialect dialect = store.dialect();
            String shard = Dialect.shardLockName(store.names(), "Orders:All");
            Duration timeout = Duration.ofMillis(300);
            try (ShardLockSession node1 = dialect.openShardLocks(store.dataSource(), store.names());
                 ShardLockSession node2 = dialect.openShardLocks(store.dataSource(), store.names())) {
                assertThat(node1.tryLock(shard)).isTrue();
                if (db.engine() == DatabaseEngine.POSTGRESQL) {
                    try (Connection blocker = db.dataSource().getConnection();
                         Statement s = blocker.createStatement()) {
                        // the probe reads pg_locks: with the view locked it waits until its bound ends it
                        blocker.setAutoCommit(false);
                        s.execute("LOCK TABLE pg_catalog.pg_locks IN ACCESS EXCLUSIVE MODE");
                        long start = System.nanoTime();
                        assertThatThrownBy(() -> node1.probe(List.of(shard), timeout))
                                .isInstanceOf(SQLException.class)
                                // the server's statement timeout, not a client-side cancel after a whole second
                                .hasMessageContaining("statement timeout")
                                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
                        // a sanity bound only: the message above is what tells 300 ms from a rounded second
                        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
                        blocker.rollback();
                    }
                }
                // the session survived the timed-out probe, still holds its lock and is back in autocommit
                assertThat(node1.probe(List.of(shard), timeout)).containsExactly(shard);
                assertThat(node2.tryLock(shard)).isFalse();
                node1.release(shard);
                assertThat(node2.tryLock(shard)).isTrue();
            }
        }
    }

    @Test
    void timeoutsReachTheEnginesInWholeMillisecondsRoundedUpAndCapped() {
        assertThat(Dialect.timeoutMillis(Duration.ofMillis(300))).isEqualTo(300);
        assertThat(Dialect.timeoutMillis(Duration.ofNanos(300_000_001))).isEqualTo(301);
        assertThat(Dialect.timeoutMillis(Duration.ofNanos(1))).isEqualTo(1);
        // zero would mean no bound at all to PostgreSQL
        assertThat(Dialect.timeoutMillis(Duration.ZERO)).isEqualTo(1);
        assertThat(Dialect.timeoutMillis(Duration.ofDays(365 * 1000))).isEqualTo(Integer.MAX_VALUE);
        assertThatThrownBy(() -> Dialect.timeoutMillis(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT-0.001S");
    }

    @Test
    void lockKeysOfAStoresShardsMustNotCollide() {
        AdvisoryLockKeys.requireDistinct(List.of("ferret:shard:a:One:All", "ferret:shard:a:Two:All"));
        // the same name twice is the same shard, not a collision
        AdvisoryLockKeys.requireDistinct(List.of("x", "y", "x"));
        assertThatThrownBy(() -> AdvisoryLockKeys.requireDistinct(null)).isInstanceOf(NullPointerException.class);
    }
}
