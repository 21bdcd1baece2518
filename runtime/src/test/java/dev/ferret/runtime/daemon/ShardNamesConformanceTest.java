package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.IdLimits;
import dev.ferret.StoreOptions;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.dialect.ShardLockSession;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Names are checked once, when the store starts: every shard name that can arise fits its column (with the longest
 * tenant id when events are partitioned by tenant), projections and subscriptions share one namespace, and no
 * statement cuts a name that is too long: the database refuses it.
 */
@Tag("conformance")
class ShardNamesConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    /** {@code <name>:All@<tenant>}: what a version-1 shard name adds to its projection's name. */
    private static final int V1_TENANT_SUFFIX = ":All@".length() + IdLimits.MAX_TENANT_ID_LENGTH;
    private static final String LONGEST_TENANT = "tenant-" + "x".repeat(IdLimits.MAX_TENANT_ID_LENGTH - 7);

    /** Counts what it is handed. */
    public static class Counter extends SubscriptionBase {
        final AtomicInteger events = new AtomicInteger();

        public Counter() {
        }

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            events.addAndGet(page.events().size());
            return PostCommitListener.NONE;
        }
    }

    private static String nameOf(int length) {
        return "P" + "x".repeat(length - 1);
    }

    private static Snapshot<Tally> tally(String name) {
        return Snapshot.of(name, Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()));
    }

    private static StoreOptions partitioned(TestDatabase db) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().partitionByTenant(true);
        return options;
    }

    @Test
    void aProjectionWhoseShardNameWithTheLongestTenantIdPassesTheColumnIsRefusedAtStartupNamingIt() {
        String name = nameOf(150);
        try (TestDatabase db = TestDatabase.create("longname")) {
            StoreOptions options = partitioned(db);
            options.projections().add(tally(name), Lifecycle.ASYNC);
            assertThatThrownBy(() -> Ferret.createStore(options).close())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("projection Snapshot[" + name + "]")
                    .hasMessageContaining("'" + name + ":All@<tenant id>' is 255 characters long")
                    .hasMessageContaining("limit of " + Dialect.MAX_SHARD_NAME_LENGTH)
                    .hasMessageContaining("a name of at most " + (250 - V1_TENANT_SUFFIX) + " characters");
        }
    }

    @Test
    void aVersionTwoWhoseVersionedShardNamePassesTheColumnIsRefusedThoughItsNameFitsVersionOne() {
        String name = nameOf(Dialect.MAX_SHARD_NAME_LENGTH - V1_TENANT_SUFFIX);
        try (TestDatabase db = TestDatabase.create("longv2")) {
            StoreOptions options = partitioned(db);
            options.projections().add(tally(name), Lifecycle.ASYNC);
            options.projections().add(tally(name).withVersion(2), Lifecycle.ASYNC);
            assertThatThrownBy(() -> Ferret.createStore(options).close())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("projection Snapshot[" + name + " v2]")
                    .hasMessageContaining("'" + name + ":V2:All@<tenant id>' is 253 characters long")
                    .hasMessageNotContaining("Snapshot[" + name + "]");
        }
    }

    @Test
    void aSubscriptionWhoseShardNamePassesTheColumnIsRefusedAtStartupNamingIt() {
        String name = nameOf(Dialect.MAX_SHARD_NAME_LENGTH - V1_TENANT_SUFFIX + 1);
        try (TestDatabase db = TestDatabase.create("longsub")) {
            StoreOptions options = partitioned(db);
            options.projections().subscribe(new Counter(), s -> s.name(name));
            assertThatThrownBy(() -> Ferret.createStore(options).close())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("subscription '" + name + "' (" + Counter.class.getName() + ")")
                    .hasMessageContaining("251 characters long")
                    .hasMessageContaining("limit of 250");
        }
    }

    @Test
    void namesExactlyAtTheLimitStartAndTheirShardsCommitForAHundredCharacterTenant() {
        String projection = nameOf(Dialect.MAX_SHARD_NAME_LENGTH - V1_TENANT_SUFFIX);
        String subscription = "S" + projection.substring(1);
        Counter counter = new Counter();
        try (TestDatabase db = TestDatabase.create("limitname")) {
            StoreOptions options = partitioned(db);
            options.projections().add(tally(projection), Lifecycle.ASYNC);
            options.projections().subscribe(counter, s -> s.name(subscription));
            try (DocumentStore store = Ferret.createStore(options)) {
                TenantPartitionConformanceTest.appendTicks(store, LONGEST_TENANT, "s", 3);
                store.waitForNonStaleProjectionData(WAIT);

                String projectionShard = projection + ":All@" + LONGEST_TENANT;
                String subscriptionShard = subscription + ":All@" + LONGEST_TENANT;
                assertThat(projectionShard).hasSize(Dialect.MAX_SHARD_NAME_LENGTH);
                assertThat(progression(db, projectionShard)).isEqualTo(3);
                assertThat(progression(db, subscriptionShard)).isEqualTo(3);
                assertThat(store.querySession(LONGEST_TENANT).load(Tally.class, "s").orElseThrow().count())
                        .isEqualTo(3);
                assertThat(counter.events).hasValue(3);
            }
        }
    }

    private static long progression(TestDatabase db, String name) {
        return db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression") + " WHERE name = '"
                + name + "'");
    }

    @Test
    void aSubscriptionRegisteredBeforeAProjectionOfItsNameRefusesTheProjectionNamingBoth() {
        StoreOptions options = new StoreOptions();
        options.projections().subscribe(new Counter(), s -> s.name("Trips"));
        assertThatThrownBy(() -> options.projections().add(tally("Trips"), Lifecycle.ASYNC))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("projection Snapshot[Trips]")
                .hasMessageContaining("subscription 'Trips' (" + Counter.class.getName() + ")");
        assertThat(options.projections().registrations()).isEmpty();
    }

    @Test
    void aProjectionRegisteredBeforeASubscriptionOfItsNameRefusesTheSubscriptionNamingBoth() {
        StoreOptions options = new StoreOptions();
        options.projections().add(tally("Trips"), Lifecycle.INLINE);
        assertThatThrownBy(() -> options.projections().subscribe(new Counter(), s -> s.name("Trips")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("projection Snapshot[Trips]")
                .hasMessageContaining("subscription 'Trips' (" + Counter.class.getName() + ")");
        assertThat(options.projections().subscriptions()).isEmpty();
    }

    @Test
    void aSubscriptionNamedLikeAGatedVersionTwosPriorVersionIsRefusedInEitherOrderNamingBoth() {
        StoreOptions projectionFirst = new StoreOptions();
        projectionFirst.projections().add(tally("Trips").withVersion(2).gateSideEffectsBehindPriorVersion(true),
                Lifecycle.ASYNC);
        assertThatThrownBy(() -> projectionFirst.projections().subscribe(new Counter(), s -> s.name("Trips")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("projection Snapshot[Trips v2]")
                .hasMessageContaining("subscription 'Trips'")
                .hasMessageContaining("'Trips:All'");

        StoreOptions subscriptionFirst = new StoreOptions();
        subscriptionFirst.projections().subscribe(new Counter(), s -> s.name("Trips"));
        assertThatThrownBy(() -> subscriptionFirst.projections().add(
                tally("Trips").withVersion(2).gateSideEffectsBehindPriorVersion(true), Lifecycle.ASYNC))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("projection Snapshot[Trips v2]")
                .hasMessageContaining("subscription 'Trips'");
    }

    @Test
    void aSubscriptionRenamedIntoAProjectionsNameAfterRegistrationIsRefusedWhenTheStoreStarts() {
        try (TestDatabase db = TestDatabase.create("renamed")) {
            StoreOptions options = DaemonFixtures.fastDaemon(db);
            Counter counter = new Counter();
            options.projections().subscribe(counter, s -> s.name("Mailer"));
            options.projections().add(tally("Trips"), Lifecycle.ASYNC);
            counter.name("Trips");
            assertThatThrownBy(() -> Ferret.createStore(options).close())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("projection Snapshot[Trips]")
                    .hasMessageContaining("subscription 'Trips' (" + Counter.class.getName() + ")");
        }
    }

    @Test
    void aSubscriptionWithoutAValidNameIsRefusedAtRegistration() {
        SubscriptionBase anonymous = new Counter() {
        };
        assertThatThrownBy(() -> new StoreOptions().projections().subscribe(anonymous))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(anonymous.getClass().getName())
                .hasMessageContaining("s.name(");
    }

    @Test
    void anOverLongProgressionNameIsRefusedByTheDatabaseNotCut() throws SQLException {
        try (TestDatabase db = TestDatabase.create("nocut");
             DocumentStore store = Ferret.createStore(db.options())) {
            Dialect dialect = Dialects.of(db.engine());
            TableNames names = new TableNames(db.schema(), "pc_");
            DaemonSql sql = dialect.daemonSql(names);
            String atLimit = nameOf(Dialect.MAX_SHARD_NAME_LENGTH);
            String over = atLimit + "1";
            try (Connection c = db.dataSource().getConnection()) {
                assertThatThrownBy(() -> dialect.advanceProgression(c, sql, over, 0, 5, OffsetDateTime.now()))
                        .isInstanceOf(SQLException.class);
                assertThatThrownBy(() -> {
                    try (PreparedStatement ps = c.prepareStatement(sql.raiseMark())) {
                        ps.setString(1, over);
                        ps.setLong(2, 7);
                        ps.setObject(3, OffsetDateTime.now());
                        ps.executeUpdate();
                    }
                }).isInstanceOf(SQLException.class);
                assertThatThrownBy(() -> {
                    try (PreparedStatement ps = c.prepareStatement(sql.insertDeadLetter())) {
                        ps.setString(1, over);
                        ps.setLong(2, 1);
                        dialect.bindUuid(ps, 3, UUID.randomUUID());
                        ps.setString(4, "Tick");
                        ps.setString(5, StoreOptions.DEFAULT_TENANT);
                        ps.setString(6, "x");
                        ps.setString(7, "x");
                        ps.setObject(8, OffsetDateTime.now());
                        ps.executeUpdate();
                    }
                }).isInstanceOf(SQLException.class);
                // the name at the limit still goes in whole
                assertThat(dialect.advanceProgression(c, sql, atLimit, 0, 3, OffsetDateTime.now())).isTrue();
            }
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_event_progression")
                    + " WHERE name LIKE '" + atLimit.substring(0, 200) + "%'")).isEqualTo(1);
            assertThat(progression(db, atLimit)).isEqualTo(3);
            assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters"))).isZero();
        }
    }

    @Test
    void anOverLongShardLockNameIsRefusedNotCutWhereTheLockIsARow() throws SQLException {
        try (TestDatabase db = TestDatabase.create("nocutlock");
             DocumentStore store = Ferret.createStore(db.options())) {
            Dialect dialect = Dialects.of(db.engine());
            int limit = dialect.maxShardLockNameLength();
            if (db.engine() == DatabaseEngine.POSTGRESQL) {
                // hashed: no length is cut, so any lock name is its own lock
                assertThat(limit).isEqualTo(Integer.MAX_VALUE);
                return;
            }
            String over = "L".repeat(limit + 1);
            try (ShardLockSession locks = dialect.openShardLocks(db.dataSource(),
                    new TableNames(db.schema(), "pc_"))) {
                assertThatThrownBy(() -> locks.tryLock(over)).isInstanceOf(SQLException.class);
                assertThat(locks.tryLock("L".repeat(limit))).isTrue();
            }
        }
    }
}
