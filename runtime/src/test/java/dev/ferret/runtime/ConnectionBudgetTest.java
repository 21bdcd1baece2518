package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonSettings;
import java.util.Map;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The arithmetic that sizes the pools Ferret opens, and the refusal of a budget too small. Runs without a database. */
class ConnectionBudgetTest {

    /** A store given URLs for its own database and two tenancy databases, and a data source for a third. */
    private static StoreOptions threeOwnedPools(int workers) {
        StoreOptions options = new StoreOptions().connection("jdbc:h2:mem:own", null, null);
        options.daemon().workerThreads(workers);
        options.tenancy().database("east", "jdbc:h2:mem:east", "e1")
                .database("given", new JdbcDataSource(), "g1")
                .database("west", "jdbc:h2:mem:west", "w1");
        return options;
    }

    @Test
    void theStoresOwnDatabaseNeedsTheWorkersPlusTwoAndOneMoreForThePostgresqlCommitListener() {
        DaemonSettings settings = new DaemonSettings().workerThreads(8);

        assertThat(ConnectionBudget.need(settings, true, false)).isEqualTo(10);
        assertThat(ConnectionBudget.need(settings, true, true)).isEqualTo(11);
    }

    @Test
    void anotherDatabaseNeedsTheWorkersOrBothPerDatabaseCapsTogetherWhicheverIsFewerPlusOne() {
        assertThat(ConnectionBudget.need(new DaemonSettings().workerThreads(8), false, false)).isEqualTo(9);
        assertThat(ConnectionBudget.need(new DaemonSettings().workerThreads(8)
                .maxConcurrentEventLoadsPerDatabase(2).maxConcurrentBatchWritesPerDatabase(1), false, false))
                .isEqualTo(4);
        assertThat(ConnectionBudget.need(new DaemonSettings().workerThreads(8)
                .maxConcurrentEventLoadsPerDatabase(6).maxConcurrentBatchWritesPerDatabase(6), false, false))
                .isEqualTo(9);
        // a load cap alone leaves every worker free to write at once
        assertThat(ConnectionBudget.need(new DaemonSettings().workerThreads(8)
                .maxConcurrentEventLoadsPerDatabase(2), false, false)).isEqualTo(9);
    }

    @Test
    void withoutABudgetEachPoolFerretOpensGetsItsNeedPlusTheSessionHeadroomAndDataSourcesGetNone() {
        Map<String, Integer> sizes = ConnectionBudget.poolSizes(threeOwnedPools(8), false);

        assertThat(sizes).containsExactly(Map.entry("default", 14), Map.entry("east", 13), Map.entry("west", 13));
    }

    @Test
    void aBudgetGivesEachPoolItsNeedAndAnEvenShareOfTheRestTheStoresOwnFirstWhenItDoesNotDivide() {
        // needs 10, 9, 9: 28; the rest, 13, is 4 each and one left over
        Map<String, Integer> sizes = ConnectionBudget.poolSizes(threeOwnedPools(8).connectionBudget(41), false);

        assertThat(sizes).containsExactly(Map.entry("default", 15), Map.entry("east", 13), Map.entry("west", 13));
        assertThat(ConnectionBudget.poolSizes(threeOwnedPools(8).connectionBudget(43), true))
                .containsExactly(Map.entry("default", 16), Map.entry("east", 14), Map.entry("west", 13));
    }

    @Test
    void aBudgetOfExactlyTheNeedsLeavesNothingForSessions() {
        assertThat(ConnectionBudget.poolSizes(threeOwnedPools(8).connectionBudget(28), false))
                .containsExactly(Map.entry("default", 10), Map.entry("east", 9), Map.entry("west", 9));
    }

    @Test
    void aBudgetBelowTheNeedsIsRefusedNamingTheKeyTheValueTheMinimumAndWhatEachDatabaseNeeds() {
        StoreOptions options = threeOwnedPools(8).connectionBudget(27);

        assertThatThrownBy(() -> ConnectionBudget.poolSizes(options, true))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("connectionBudget 27 is below the 29 connections the daemon needs on the pools Ferret"
                        + " opens (default 11, east 9, west 9, with workerThreads 8): raise it to at least 29, or"
                        + " lower workerThreads or the per-database load and write caps");
    }

    @Test
    void aStoreOnTheApplicationsDataSourcesOpensNoPoolAndSpendsNoBudget() {
        StoreOptions options = new StoreOptions().dataSource(new JdbcDataSource()).connectionBudget(1);
        options.tenancy().database("given", new JdbcDataSource(), "g1");

        assertThat(ConnectionBudget.poolSizes(options, true)).isEmpty();
    }

    @Test
    void aNegativeBudgetIsRefusedNamingTheKeyAndTheValue() {
        assertThatThrownBy(() -> new StoreOptions().connectionBudget(-1))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("connectionBudget")
                .hasMessageContaining("-1");
    }
}
