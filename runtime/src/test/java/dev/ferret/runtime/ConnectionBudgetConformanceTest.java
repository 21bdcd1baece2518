package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DatabaseException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.daemon.DaemonFixtures;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A store given URLs for its own database and two tenancy databases opens one pool for each, sized out of its
 * connection budget, projects every database's tenants through them and closes them with itself; a budget too small
 * fails before any pool opens. The pools' sessions are counted on the server by who they are: on H2 by the user the
 * store signs in as (which also shows every pool uses the store's credentials), elsewhere by the application name in
 * their URLs.
 */
@Tag("conformance")
class ConnectionBudgetConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String H2_USER = "FERRET_POOLS";
    private static final String H2_PASSWORD = "pools-secret";

    /** The store's own database and the two tenancy databases, and how their pools' sessions are recognised. */
    private record Databases(TestDatabase own, TestDatabase east, TestDatabase west, String tag)
            implements AutoCloseable {

        static Databases create(String label) {
            TestDatabase own = TestDatabase.create(label);
            TestDatabase east = own.sibling("east");
            TestDatabase west = own.sibling("west");
            Databases databases = new Databases(own, east, west, "ferret_" + own.schema());
            if (own.engine() == DatabaseEngine.H2) {
                List.of(own, east, west).forEach(db -> db.execute("CREATE USER IF NOT EXISTS " + H2_USER
                        + " PASSWORD '" + H2_PASSWORD + "' ADMIN"));
            }
            return databases;
        }

        /** {@code db}'s URL, carrying the tag the pool's sessions are recognised by where the engine has one. */
        String url(TestDatabase db) {
            return switch (db.engine()) {
                case H2 -> db.url();
                case POSTGRESQL -> db.url() + (db.url().contains("?") ? "&" : "?") + "ApplicationName=" + tag;
                case SQL_SERVER -> db.url() + ";applicationName=" + tag;
            };
        }

        /** A partitioned store on the three databases by URL, with the Tally projection and two workers. */
        StoreOptions options(int budget) {
            boolean h2 = own.engine() == DatabaseEngine.H2;
            StoreOptions options = new StoreOptions().connection(url(own), h2 ? H2_USER : null, h2 ? H2_PASSWORD : null)
                    .schema(own.schema()).applyAllDatabaseChangesOnStartup(true).connectionBudget(budget);
            options.events().partitionByTenant(true).register(Tick.class);
            options.daemon().mode(DaemonMode.SOLO).workerThreads(2).pollingInterval(Duration.ofMillis(50))
                    .batchSize(50);
            options.tenancy().database("east", url(east), "east-1").database("west", url(west), "west-1");
            return DaemonFixtures.withTally(options);
        }

        /** How many sessions the store's pools hold, on all three databases. */
        long ownedSessions() {
            return switch (own.engine()) {
                case H2 -> count(own, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE USER_NAME = ?", H2_USER)
                        + count(east, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE USER_NAME = ?", H2_USER)
                        + count(west, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE USER_NAME = ?", H2_USER);
                case POSTGRESQL -> count(own, "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ?", tag);
                case SQL_SERVER -> count(own, "SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE program_name = ?", tag);
            };
        }

        /** The pool sizes a budget of 16 gives with two workers: needs 4, 3 and 3, and 5 more on PostgreSQL. */
        Map<String, Integer> sizesOfSixteen() {
            // PostgreSQL's own database also holds the commit listener: needs 5, 3, 3 and the rest of 5 is 1 each and
            // one more for the first two; elsewhere needs 4, 3, 3 and the rest of 6 is 2 each
            return own.engine() == DatabaseEngine.POSTGRESQL ? Map.of("default", 7, "east", 5, "west", 4)
                    : Map.of("default", 6, "east", 5, "west", 5);
        }

        @Override
        public void close() {
            // the siblings first: on a server, the store's own database's connection drops them
            try {
                west.close();
            } finally {
                try {
                    east.close();
                } finally {
                    own.close();
                }
            }
        }
    }

    @Test
    void eachPoolOfTheBudgetHoldsItsComputedSizeProjectsItsTenantsAndClosesWithTheStore() {
        try (Databases databases = Databases.create("budget")) {
            OwnedPools pools;
            try (DocumentStore store = Ferret.createStore(databases.options(16))) {
                pools = ((FerretDocumentStore) store).ownedPools();
                assertThat(pools.byDatabase()).hasSize(3);
                pools.byDatabase().forEach((database, pool) -> assertThat(pool.getMaximumPoolSize())
                        .as("pool of %s", database).isEqualTo(databases.sizesOfSixteen().get(database)));

                appendTicks(store, "local", 3);
                appendTicks(store, "east-1", 4);
                appendTicks(store, "west-1", 5);
                store.waitForNonStaleProjectionData(WAIT);

                assertThat(tally(store, "local")).isEqualTo(3);
                assertThat(tally(store, "east-1")).isEqualTo(4);
                assertThat(tally(store, "west-1")).isEqualTo(5);
                assertThat(eventsOf(databases.east(), "east-1")).isEqualTo(4);
                assertThat(eventsOf(databases.west(), "west-1")).isEqualTo(5);
                assertThat(eventsOf(databases.own(), "east-1")).isZero();
                assertThat(databases.ownedSessions()).isPositive().isLessThanOrEqualTo(16);
            }
            assertThat(pools.byDatabase().values()).allMatch(HikariDataSource::isClosed);
            await().atMost(WAIT).until(() -> databases.ownedSessions() == 0);
        }
    }

    @Test
    void aBudgetBelowWhatTheDatabasesNeedFailsNamingTheKeyTheValueAndEachNeedBeforeAnyPoolOpens() {
        try (Databases databases = Databases.create("budgetlow")) {
            assertThatThrownBy(() -> Ferret.createStore(databases.options(9)))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("connectionBudget 9 is below the")
                    .hasMessageContaining("east 3, west 3")
                    .hasMessageContaining("raise it to at least");
            assertThat(databases.ownedSessions()).isZero();
        }
    }

    @Test
    void aTenancyDatabaseThatCannotBeReachedIsNamedWithItsUrlButNotItsPasswordAndThePoolsOpenedCloseAgain() {
        try (Databases databases = Databases.create("budgetdown")) {
            StoreOptions options = databases.options(0);
            options.tenancy().database("nowhere", "jdbc:postgresql://127.0.0.1:1/nowhere?user=f&password=s3cret",
                    "lost-1");

            assertThatThrownBy(() -> Ferret.createStore(options))
                    .isInstanceOf(DatabaseException.class)
                    .hasMessageContaining("tenancy database 'nowhere' (jdbc:postgresql://127.0.0.1:1/nowhere?user=f"
                            + "&password=***)")
                    .hasMessageNotContaining("s3cret");
            await().atMost(WAIT).until(() -> databases.ownedSessions() == 0);
        }
    }

    private static void appendTicks(DocumentStore store, String tenant, int count) {
        try (DocumentSession session = store.openSession(tenant)) {
            for (int i = 1; i <= count; i++) {
                session.events().append("s", new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static long tally(DocumentStore store, String tenant) {
        try (QuerySession session = store.querySession(tenant)) {
            return session.load(Tally.class, "s").map(Tally::count).orElse(0L);
        }
    }

    private static long eventsOf(TestDatabase db, String tenant) {
        return count(db, "SELECT COUNT(*) FROM " + db.table("pc_events") + " WHERE tenant_id = ?", tenant);
    }

    private static long count(TestDatabase db, String sql, String value) {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, value);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
