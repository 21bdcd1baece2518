package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DatabaseException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** Startup paths that need no particular server: defaults, detection and connection failures. */
class StoreStartupTest {

    @Test
    void withNothingConfiguredTheStoreRunsOnEmbeddedH2() {
        try (DocumentStore store = Ferret.createStore(o -> o.applyAllDatabaseChangesOnStartup(true))) {
            assertThat(store.engine()).isEqualTo(DatabaseEngine.H2);
            try (DocumentSession session = store.openSession()) {
                session.events().append("default-h2", new OrderPlaced("o", "c", 1));
                session.saveChanges();
            }
            assertThat(store.querySession().fetchStream("default-h2")).isNotEmpty();
        }
    }

    @Test
    void theApisOwnEntryPointFindsTheRuntimeAndBuildsAWorkingStore() {
        try (DocumentStore store = DocumentStore.create(o -> o.connection("jdbc:h2:mem:entry;DB_CLOSE_DELAY=-1",
                null, null).applyAllDatabaseChangesOnStartup(true).events().register(Ping.class))) {
            assertThat(store.engine()).isEqualTo(DatabaseEngine.H2);
            try (DocumentSession session = store.openSession()) {
                session.events().append("pings", new Ping("p"));
                session.saveChanges();
            }
            assertThat(store.querySession().fetchStream("pings")).hasSize(1);
        }
    }

    public record Ping(String id) {
    }

    @Test
    void anUnreachableUrlFailsNamingTheUrlAndEngineButNotThePassword() {
        assertThatThrownBy(() -> Ferret.createStore(o -> o.connection(
                "jdbc:postgresql://127.0.0.1:1/nowhere?user=ferret&password=s3cret", null, "other-secret")))
                .isInstanceOf(DatabaseException.class)
                .hasMessageContaining("jdbc:postgresql://127.0.0.1:1/nowhere?user=ferret&password=***")
                .hasMessageContaining("PostgreSQL")
                .hasMessageNotContaining("s3cret")
                .hasMessageNotContaining("other-secret");
    }

    @Test
    void aDataSourceThatCannotConnectFailsNamingItsUrl() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:absent;IFEXISTS=TRUE");
        assertThatThrownBy(() -> Ferret.createStore(o -> o.dataSource(dataSource)))
                .isInstanceOf(DatabaseException.class)
                .hasMessageContaining("cannot connect to jdbc:h2:mem:absent;IFEXISTS=TRUE (H2)");
    }

    @Test
    void aUrlThatIsNotJdbcIsRejectedWhenConfigured() {
        assertThatThrownBy(() -> new StoreOptions().connection("postgres://host/db", "u", "p"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'jdbc:'")
                .hasMessageContaining("postgres://host/db");
    }

    @Test
    void aTenancyDatabaseUrlThatIsBlankOrNotJdbcIsRejectedNamingTheDatabaseButNotThePassword() {
        assertThatThrownBy(() -> new StoreOptions().tenancy().database("east", " ", "t1"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("tenancy database 'east'")
                .hasMessageContaining("'jdbc:'");
        assertThatThrownBy(() -> new StoreOptions().tenancy().database("east", (String) null, "t1"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("tenancy database 'east'");
        assertThatThrownBy(() -> new StoreOptions().tenancy().database("east", "postgres://h/db?password=s3cret"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("tenancy database 'east'")
                .hasMessageContaining("postgres://h/db?password=***").hasMessageNotContaining("s3cret");
    }

    @Test
    void passwordsAreRedactedFromEveryUrlShape() {
        assertThat(StoreOptions.redact("jdbc:sqlserver://h;user=sa;password=Secret1;encrypt=true"))
                .isEqualTo("jdbc:sqlserver://h;user=sa;password=***;encrypt=true");
        assertThat(StoreOptions.redact("jdbc:postgresql://h/db?user=u&password=x&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=***&ssl=true");
        assertThat(StoreOptions.redact("jdbc:h2:mem:x;PWD=abc")).isEqualTo("jdbc:h2:mem:x;PWD=***");
        // SQL Server's braced values may hold ';' and a doubled '}'
        assertThat(StoreOptions.redact("jdbc:sqlserver://h;password={se;cr}}et};encrypt=true"))
                .isEqualTo("jdbc:sqlserver://h;password=***;encrypt=true");
        assertThat(StoreOptions.redact("jdbc:sqlserver://h;accessToken=eyJ0b2tlbg;trustStorePassword=ts;"
                + "keyStoreSecret={k};authentication=ActiveDirectoryServicePrincipal;AADSecurePrincipalSecret=s"))
                .isEqualTo("jdbc:sqlserver://h;accessToken=***;trustStorePassword=***;keyStoreSecret=***;"
                        + "authentication=ActiveDirectoryServicePrincipal;AADSecurePrincipalSecret=***");
        assertThat(StoreOptions.redact("jdbc:postgresql://h/db?user=tokenholder&sslpassword=p"))
                .isEqualTo("jdbc:postgresql://h/db?user=tokenholder&sslpassword=***");
    }

    @Test
    void eventAliasesCannotBeSharedByTwoTypes() {
        StoreOptions options = new StoreOptions();
        options.events().register(OrderPlaced.class, "placed");
        assertThatThrownBy(() -> options.events().register(String.class, "placed"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'placed'")
                .hasMessageContaining(OrderPlaced.class.getName());
    }
}
