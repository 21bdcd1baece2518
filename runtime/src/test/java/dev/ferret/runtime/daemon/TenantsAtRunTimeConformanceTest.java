package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.TenantPartitionConformanceTest.appendTicks;
import static dev.ferret.runtime.daemon.TenantPartitionConformanceTest.partitioned;
import static dev.ferret.runtime.daemon.TenantPartitionConformanceTest.tenantSequence;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tenants added, moved and removed while the store runs: a tenant the configuration does not list is placed by the
 * resolver at its first use, and a released tenant's shards leave the daemon and come back where it lives then;
 * other tenants' shards are never replaced.
 */
@Tag("conformance")
class TenantsAtRunTimeConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Where each tenant lives, as the application's own table would say; absent: the store's own database. */
    private final Map<String, String> placement = new ConcurrentHashMap<>();

    private StoreOptions resolving(TestDatabase db, TestDatabase far) {
        StoreOptions options = partitioned(db);
        options.tenancy().database("far", far.dataSource())
                .resolver(tenant -> Optional.ofNullable(placement.get(tenant)));
        return options;
    }

    private static long count(DocumentStore store, String tenant) {
        try (QuerySession session = store.querySession(tenant)) {
            return session.load(Tally.class, "s").map(Tally::count).orElse(0L);
        }
    }

    @Test
    void aTenantTheResolverPlacesAtItsFirstUseIsProjectedInItsDatabaseAndNoOtherShardIsReplaced() throws Exception {
        try (TestDatabase db = TestDatabase.create("tresolve");
             TestDatabase far = db.sibling("far");
             DocumentStore store = Ferret.createStore(resolving(db, far))) {
            appendTicks(store, "local", "s", 2);
            store.waitForNonStaleProjectionData(WAIT);
            AsyncDaemon daemon = (AsyncDaemon) store.daemon();
            Object localAgent = daemon.agentOf("Tally:All@local");
            assertThat(localAgent).isNotNull();

            placement.put("newcomer", "far");
            appendTicks(store, "newcomer", "s", 3);
            store.waitForNonStaleProjectionData(WAIT);

            assertThat(tenantSequence(far.dataSource(), far, "newcomer")).containsExactly(1L, 2L, 3L);
            assertThat(tenantSequence(db.dataSource(), db, "newcomer")).isEmpty();
            assertThat(count(store, "newcomer")).isEqualTo(3);
            ShardStatus newcomer = daemon.shard("Tally:All@newcomer").orElseThrow();
            assertThat(newcomer.database()).isEqualTo("far");
            assertThat(newcomer.state()).isEqualTo(ShardState.RUNNING);
            assertThat(daemon.agentOf("Tally:All@local")).as("the other tenant's agent").isSameAs(localAgent);
            assertThat(daemon.shard("Tally:All@local").orElseThrow().state()).isEqualTo(ShardState.RUNNING);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = DaemonMode.class, names = {"SOLO", "HOT_COLD"})
    void aReleasedTenantMovesToAnotherDatabaseAndRunsThereWhileTheOthersGoOn(DaemonMode mode) throws Exception {
        try (TestDatabase db = TestDatabase.create("tmove");
             TestDatabase far = db.sibling("far")) {
            StoreOptions options = resolving(db, far);
            // HotCold: the released shards' locks are given back once they drained, and taken again in the new place
            options.daemon().mode(mode).lockAcquireInterval(Duration.ofMillis(50));
            try (DocumentStore store = Ferret.createStore(options)) {
                moveAndCheck(store, db, far);
            }
        }
    }

    private void moveAndCheck(DocumentStore store, TestDatabase db, TestDatabase far) throws Exception {
        appendTicks(store, "mover", "s", 3);
        appendTicks(store, "stayer", "s", 2);
        store.waitForNonStaleProjectionData(WAIT);
        AsyncDaemon daemon = (AsyncDaemon) store.daemon();
        Object stayer = daemon.agentOf("Tally:All@stayer");
        List<EventEnvelope> moved;
        try (QuerySession session = store.querySession("mover")) {
            moved = session.fetchStream("s");
        }

        List<String> released = daemon.releaseTenant("mover", WAIT, () -> {
            // the application's move: here its events are replayed in the new database, the old rows deleted
            assertThat(daemon.shard("Tally:All@mover")).as("out of the daemon while it moves").isEmpty();
            deleteTenant(db, "mover");
            placement.put("mover", "far");
        });
        assertThat(released).containsExactly("Tally:All@mover");
        appendTicks(store, "mover", "s", moved.size() + 1);
        appendTicks(store, "stayer", "s", 1);
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(tenantSequence(far.dataSource(), far, "mover")).hasSize(4);
        assertThat(tenantSequence(db.dataSource(), db, "mover")).isEmpty();
        assertThat(count(store, "mover")).isEqualTo(4);
        assertThat(daemon.shard("Tally:All@mover").orElseThrow().database()).isEqualTo("far");
        assertThat(count(store, "stayer")).isEqualTo(3);
        assertThat(daemon.agentOf("Tally:All@stayer")).as("the other tenant's agent").isSameAs(stayer);
    }

    @Test
    void aResolverThatNamesAnUnknownDatabaseIsRefusedNamingTheTenantAndTheAnswer() throws Exception {
        try (TestDatabase db = TestDatabase.create("tunknown");
             TestDatabase far = db.sibling("far");
             DocumentStore store = Ferret.createStore(resolving(db, far))) {
            placement.put("lost", "nowhere");
            assertThatThrownBy(() -> appendTicks(store, "lost", "s", 1)).isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("'lost'").hasMessageContaining("'nowhere'").hasMessageContaining("far");
            appendTicks(store, "fine", "s", 1);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(count(store, "fine")).isEqualTo(1);
        }
    }

    @Test
    void aDatabaseWithNoTenantAndNoResolverAndAReleaseWithoutPartitionsAreRefused() throws Exception {
        try (TestDatabase db = TestDatabase.create("tnone");
             TestDatabase far = db.sibling("far")) {
            StoreOptions options = partitioned(db);
            options.tenancy().database("far", far.dataSource());
            assertThatThrownBy(() -> Ferret.createStore(options)).isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("'far' holds no tenant").hasMessageContaining("resolver");
            try (DocumentStore whole = Ferret.createStore(DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db)))) {
                assertThatThrownBy(() -> whole.daemon().releaseTenant("t", WAIT, () -> { }))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitionByTenant");
            }
        }
    }

    private static void deleteTenant(TestDatabase db, String tenant) {
        try (Connection c = db.dataSource().getConnection()) {
            for (String table : List.of("pc_events", "pc_streams", "pc_tenant_sequences", "pc_doc_tally")) {
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + db.table(table)
                        + " WHERE tenant_id = ?")) {
                    ps.setString(1, tenant);
                    ps.executeUpdate();
                }
            }
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + db.table("pc_event_progression")
                    + " WHERE name = ?")) {
                ps.setString(1, "Tally:All@" + tenant);
                ps.executeUpdate();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
