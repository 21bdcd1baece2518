package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.metrics.ReadRoute;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * The routing decisions of {@link ReplicaReads} on positions and time the test sets by hand: which data source each
 * read gets, when the replica is asked again, and how long a read waits. Runs without a database (the data sources
 * are never connected).
 */
class ReplicaReadsTest {

    private static final Duration BOUND = Duration.ofSeconds(1);

    private final DataSource primary = new JdbcDataSource();
    private final DataSource replica = new JdbcDataSource();
    private final DataSource otherPrimary = new JdbcDataSource();
    private final TenantDatabases.Database main = new TenantDatabases.Database(StoreOptions.DEFAULT_DATABASE, primary);
    private final TenantDatabases.Database other = new TenantDatabases.Database("other", otherPrimary);
    private final ManualTime time = new ManualTime();
    private final ScriptedPositions positions = new ScriptedPositions();

    /** What the metrics were told, as "database:route". */
    private final List<String> routes = new CopyOnWriteArrayList<>();
    private final DaemonMetrics metrics = new DaemonMetrics() {
        @Override
        public void replicaRead(String database, ReadRoute route) {
            routes.add(database + ":" + route.attribute());
        }
    };

    private ReplicaReads reads(ReplayPositions with) {
        return new ReplicaReads(Map.of(StoreOptions.DEFAULT_DATABASE, replica), with, time, BOUND, metrics);
    }

    @Test
    void theMetricsHearOfEveryReadOfADatabaseWithAReplicaAndWhereItWent() {
        positions.replayed(120, 130);
        ReplicaReads reads = reads(positions);

        reads.forRead(main, ReplicaReads.NOTHING_AWAITED);
        reads.forRead(main, 100);
        reads.forRead(main, 500);
        reads.forRead(other, 500);
        reads(null).forRead(main, ReplicaReads.UNPROVABLE);

        assertThat(routes).containsExactly("default:replica", "default:replica_caught_up",
                "default:primary_replica_behind", "default:primary_unprovable");
    }

    @Test
    void aReadThatAwaitsNothingGoesToTheReplicaWithoutAskingItsPosition() {
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, ReplicaReads.NOTHING_AWAITED)).isSameAs(replica);
        assertThat(positions.replayedReads).isZero();
        assertThat(reads.counts()).isEqualTo(new ReplicaReads.Counts(1, 0, 0, 0));
    }

    @Test
    void aDatabaseWithoutAReplicaIsReadItselfWhateverTheReadAwaits() {
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(other, ReplicaReads.NOTHING_AWAITED)).isSameAs(otherPrimary);
        assertThat(reads.forRead(other, 500)).isSameAs(otherPrimary);
        assertThat(reads.awaitedNow(other)).isEqualTo(ReplicaReads.NOTHING_AWAITED);
        assertThat(reads.counts()).isEqualTo(new ReplicaReads.Counts(0, 0, 0, 0));
    }

    @Test
    void aNonStaleReadWaitsForTheReplicaToReplayPastTheAwaitedPositionThenReadsIt() {
        positions.replayed(90, 95, 100);
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, 100)).isSameAs(replica);
        assertThat(positions.replayedReads).isEqualTo(3);
        assertThat(time.slept).isEqualTo(ReplicaReads.POLL.multipliedBy(2));
        assertThat(reads.counts()).isEqualTo(new ReplicaReads.Counts(1, 1, 0, 0));
    }

    @Test
    void aNonStaleReadGoesToThePrimaryOnceTheBoundRunsOutWithTheReplicaBehind() {
        positions.replayed(90);
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, 100)).isSameAs(primary);
        assertThat(time.slept).isEqualTo(BOUND);
        assertThat(reads.counts()).isEqualTo(new ReplicaReads.Counts(0, 0, 1, 0));
    }

    @Test
    void aZeroBoundAsksTheReplicaOnceAndNeverWaits() {
        positions.replayed(90);
        ReplicaReads reads = new ReplicaReads(Map.of(StoreOptions.DEFAULT_DATABASE, replica), positions, time,
                Duration.ZERO);

        assertThat(reads.forRead(main, 100)).isSameAs(primary);
        assertThat(positions.replayedReads).isOne();
        assertThat(time.slept).isZero();
    }

    @Test
    void aReplicaProvenPastAPositionIsNotAskedAgainForThatOrALowerOne() {
        positions.replayed(120);
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, 100)).isSameAs(replica);
        assertThat(reads.forRead(main, 120)).isSameAs(replica);
        assertThat(reads.forRead(main, 50)).isSameAs(replica);

        assertThat(positions.replayedReads).isOne();
        assertThat(reads.counts()).isEqualTo(new ReplicaReads.Counts(3, 3, 0, 0));
    }

    @Test
    void aServerThatIsNotReplayingNeverCountsAsCaughtUp() {
        positions.replayed(ReplayPositions.NOT_REPLAYING);
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, 0)).isSameAs(primary);
        assertThat(reads.counts().fellBack()).isOne();
    }

    @Test
    void aReplicaWhosePositionCannotBeReadIsLeftForThePrimaryAtOnce() {
        positions.failReplayed = true;
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, 100)).isSameAs(primary);
        assertThat(time.slept).isZero();
        assertThat(reads.counts().fellBack()).isOne();
    }

    @Test
    void afterAWaitTheReadAwaitsThePrimarysPositionAndOnAnEngineWithoutPositionsNothingProvesTheReplica() {
        positions.primary = 4242;
        assertThat(reads(positions).awaitedNow(main)).isEqualTo(4242);

        ReplicaReads blind = reads(null);
        long awaited = blind.awaitedNow(main);
        assertThat(awaited).isEqualTo(ReplicaReads.UNPROVABLE);
        assertThat(blind.forRead(main, awaited)).isSameAs(primary);
        assertThat(blind.forRead(main, ReplicaReads.NOTHING_AWAITED)).isSameAs(replica);
        assertThat(blind.counts()).isEqualTo(new ReplicaReads.Counts(1, 0, 0, 1));
    }

    @Test
    void thePrimarysPositionThatCannotBeReadLeavesTheNonStaleReadToThePrimary() {
        positions.failPrimary = true;
        ReplicaReads reads = reads(positions);

        assertThat(reads.forRead(main, reads.awaitedNow(main))).isSameAs(primary);
        assertThat(positions.replayedReads).isZero();
    }

    @Test
    void aStoreWideWaitMakesEveryLaterReadNeedWhatItAwaitedUntilTheReplicaIsProvenPastIt() {
        positions.primary = 200;
        positions.replayed(150, 150, 200, 200);
        ReplicaReads reads = reads(positions);
        reads.storeWideWaitEnded(List.of(main, other));

        // a plain read after the wait is held to it: the replica is asked until it has replayed 200
        assertThat(reads.forRead(main, ReplicaReads.NOTHING_AWAITED)).isSameAs(replica);
        assertThat(positions.replayedReads).isEqualTo(3);
        // proven once, later reads go straight to the replica
        assertThat(reads.forRead(main, ReplicaReads.NOTHING_AWAITED)).isSameAs(replica);
        assertThat(positions.replayedReads).isEqualTo(3);
    }

    @Test
    void onAnEngineWithoutPositionsAStoreWideWaitSendsLaterReadsToThePrimary() {
        ReplicaReads reads = reads(null);
        reads.storeWideWaitEnded(List.of(main));

        assertThat(reads.forRead(main, ReplicaReads.NOTHING_AWAITED)).isSameAs(primary);
        assertThat(reads.counts().unprovable()).isOne();
    }

    @Test
    void aReplicaThatIsItsDatabasesPrimaryIsRefusedNamingTheDatabase() {
        StoreOptions options = new StoreOptions().replica(primary);
        TenantDatabases databases = new TenantDatabases(primary, options.tenancy(), false);

        assertThatThrownBy(() -> ReplicaReads.of(options, databases, positions, time, DaemonMetrics.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("replica of database 'default' is its primary data source");
    }

    @Test
    void theOptionsRefuseAReplicaOfAnUnknownOrRepeatedDatabaseNamingIt() {
        StoreOptions options = new StoreOptions();
        options.tenancy().database("east", otherPrimary, "t1");

        assertThatThrownBy(() -> options.tenancy().replica("west", replica))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'west'")
                .hasMessageContaining("no such database");
        assertThatThrownBy(() -> options.tenancy().replica("east", otherPrimary))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'east' is its primary");
        options.tenancy().replica("east", replica);
        assertThatThrownBy(() -> options.tenancy().replica("east", replica))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'east' is given a replica twice");
        assertThatThrownBy(() -> options.tenancy().replica(StoreOptions.DEFAULT_DATABASE, replica))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("StoreOptions.replica");
        assertThatThrownBy(() -> options.replicaCatchUpTimeout(Duration.ofMillis(-1)))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("replicaCatchUpTimeout");
        assertThat(options.getReplicaCatchUpTimeout()).isEqualTo(StoreOptions.DEFAULT_REPLICA_CATCH_UP_TIMEOUT);
    }

    /** Positions the test scripts: the replica's answers in turn, the last one repeated. */
    private static final class ScriptedPositions implements ReplayPositions {
        long primary;
        boolean failPrimary;
        boolean failReplayed;
        int replayedReads;
        private final Deque<Long> replayed = new ArrayDeque<>(List.of(ReplayPositions.NOT_REPLAYING));

        void replayed(long... answers) {
            replayed.clear();
            for (long answer : answers) {
                replayed.add(answer);
            }
        }

        @Override
        public long primary(DataSource dataSource) throws SQLException {
            if (failPrimary) {
                throw new SQLException("refused", "08006");
            }
            return primary;
        }

        @Override
        public long replayed(DataSource dataSource) throws SQLException {
            replayedReads++;
            if (failReplayed) {
                throw new SQLException("refused", "08006");
            }
            return replayed.size() > 1 ? replayed.poll() : replayed.peek();
        }
    }

    /** Time that moves only when a read sleeps. */
    private static final class ManualTime implements TimeSource {
        Duration slept = Duration.ZERO;

        @Override
        public long nanoTime() {
            return slept.toNanos();
        }

        @Override
        public boolean awaitDone(Future<?> future, long deadlineNanos) {
            throw new UnsupportedOperationException("not used by replica reads");
        }

        @Override
        public void sleep(Duration pause) {
            slept = slept.plus(pause);
        }
    }
}
