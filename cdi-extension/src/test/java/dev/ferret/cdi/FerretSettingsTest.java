package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FerretSettingsTest {

    private static FerretSettings read(Map<String, String> values) {
        return FerretSettings.read(key -> Optional.ofNullable(values.get(key)));
    }

    @Test
    void defaultsNeedNoConfiguration() {
        FerretSettings settings = read(Map.of());
        assertThat(settings.problems()).isEmpty();
        assertThat(settings.dataSource()).isEqualTo("java:comp/DefaultDataSource");
        assertThat(settings.transactions()).isEqualTo(FerretSettings.Transactions.JTA);
        assertThat(settings.managedExecutor()).isEqualTo("java:comp/DefaultManagedExecutorService");
        assertThat(settings.managedScheduledExecutor()).isEqualTo("java:comp/DefaultManagedScheduledExecutorService");
        StoreOptions options = settings.applyTo(new StoreOptions());
        assertThat(options.daemon().getMode()).isEqualTo(DaemonMode.DISABLED);
    }

    @Test
    void everyKeyIsAppliedTyped() {
        FerretSettings settings = read(Map.ofEntries(
                Map.entry("ferret.datasource", "jdbc/orders"),
                Map.entry("ferret.transactions", "JDBC"),
                Map.entry("ferret.schema", "ferret"),
                Map.entry("ferret.table-prefix", "fx_"),
                Map.entry("ferret.apply-all-database-changes-on-startup", "TRUE"),
                Map.entry("ferret.engine", "sql-server"),
                Map.entry("ferret.events.types", "java.lang.String, renamed=java.lang.Integer"),
                Map.entry("ferret.daemon.mode", "solo"),
                Map.entry("ferret.daemon.polling-interval", "PT0.25S"),
                Map.entry("ferret.daemon.stale-sequence-threshold", "PT4S"),
                Map.entry("ferret.daemon.append-fence-timeout", "PT2S"),
                Map.entry("ferret.daemon.forced-gap-skip-threshold", "PT5M"),
                Map.entry("ferret.daemon.batch-size", "50"),
                Map.entry("ferret.daemon.skip-apply-errors", "true"),
                Map.entry("ferret.daemon.max-transient-retries", "2"),
                Map.entry("ferret.daemon.transient-retry-backoff", "PT0.2S"),
                Map.entry("ferret.daemon.max-retry-backoff", "PT10S"),
                Map.entry("ferret.daemon.stalled-shard-threshold", "PT3M"),
                Map.entry("ferret.daemon.outbox-retention", "PT30M"),
                Map.entry("ferret.projections.stop-and-drain-timeout", "PT7S")));
        assertThat(settings.problems()).isEmpty();
        assertThat(settings.dataSource()).isEqualTo("jdbc/orders");
        assertThat(settings.transactions()).isEqualTo(FerretSettings.Transactions.JDBC);
        assertThat(settings.eventTypes()).containsEntry("String", "java.lang.String")
                .containsEntry("renamed", "java.lang.Integer");
        StoreOptions options = settings.applyTo(new StoreOptions());
        assertThat(options.getSchema()).isEqualTo("ferret");
        assertThat(options.getTablePrefix()).isEqualTo("fx_");
        assertThat(options.isApplyAllDatabaseChangesOnStartup()).isTrue();
        assertThat(options.getEngine()).isEqualTo(dev.ferret.DatabaseEngine.SQL_SERVER);
        var d = options.daemon();
        assertThat(d.getMode()).isEqualTo(DaemonMode.SOLO);
        assertThat(d.getPollingInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(d.getStaleSequenceThreshold()).isEqualTo(Duration.ofSeconds(4));
        assertThat(d.getAppendFenceTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(d.getForcedGapSkipThreshold()).isEqualTo(Duration.ofMinutes(5));
        assertThat(d.getBatchSize()).isEqualTo(50);
        assertThat(d.isSkipApplyErrors()).isTrue();
        assertThat(d.getMaxTransientRetries()).isEqualTo(2);
        assertThat(d.getTransientRetryBackoff()).isEqualTo(Duration.ofMillis(200));
        assertThat(d.getMaxRetryBackoff()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.getStalledShardThreshold()).isEqualTo(Duration.ofMinutes(3));
        assertThat(d.getOutboxRetention()).isEqualTo(Duration.ofMinutes(30));
        assertThat(d.getStopAndDrainTimeout()).isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void everyRefusedValueIsReportedWithItsKeyAndValue() {
        FerretSettings settings = read(Map.of(
                "ferret.daemon.mode", "sometimes",
                "ferret.daemon.polling-interval", "500ms",
                "ferret.daemon.batch-size", "0",
                "ferret.daemon.skip-apply-errors", "yes",
                "ferret.schema", "bad schema",
                "ferret.projections.stop-and-drain-timeout", "5s"));
        assertThat(settings.problems()).hasSize(6);
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p)
                .contains("ferret.daemon.mode=sometimes").contains("[DISABLED, SOLO, HOT_COLD]"));
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p)
                .contains("ferret.daemon.polling-interval=500ms").contains("ISO-8601"));
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p).contains("ferret.daemon.batch-size=0"));
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p).contains("ferret.daemon.skip-apply-errors=yes"));
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p).contains("ferret.schema=bad schema"));
        assertThat(settings.problems()).anySatisfy(p -> assertThat(p)
                .contains("ferret.projections.stop-and-drain-timeout=5s").contains("ISO-8601"));
    }

    @Test
    void aZeroOutboxRetentionIsRefusedNamingItsKeyAndValue() {
        FerretSettings settings = read(Map.of("ferret.daemon.outbox-retention", "PT0S"));
        assertThat(settings.problems()).singleElement().asString()
                .contains("ferret.daemon.outbox-retention").contains("PT0S");
    }

    @Test
    void settingsThatDisagreeAreReported() {
        FerretSettings settings = read(Map.of(
                "ferret.daemon.stale-sequence-threshold", "PT10M",
                "ferret.daemon.forced-gap-skip-threshold", "PT1M"));
        assertThat(settings.problems()).singleElement().asString()
                .contains("ferret.daemon.forced-gap-skip-threshold").contains("ferret.daemon.stale-sequence-threshold");
    }

    @Test
    void theLoadBudgetKeysAreReadAndBadValuesNamed() {
        FerretSettings settings = read(Map.of("ferret.daemon.tenant-load-budget", "4000",
                "ferret.daemon.tenant-load-memory-threshold", "0.8", "ferret.daemon.max-concurrent-event-loads", "3"));
        assertThat(settings.problems()).isEmpty();
        dev.ferret.daemon.DaemonSettings daemon = settings.applyTo(new dev.ferret.StoreOptions()).daemon();
        assertThat(daemon.getTenantLoadBudget()).isEqualTo(4000);
        assertThat(daemon.getTenantLoadMemoryThreshold()).isEqualTo(0.8);
        assertThat(daemon.getMaxConcurrentEventLoadsPerDatabase()).isEqualTo(3);
        assertThat(read(Map.of("ferret.daemon.tenant-load-memory-threshold", "lots")).problems()).singleElement()
                .asString().contains("ferret.daemon.tenant-load-memory-threshold=lots");
        assertThat(read(Map.of("ferret.daemon.tenant-load-budget", "-1")).problems()).singleElement()
                .asString().contains("-1");
    }

    @Test
    void hotColdAndItsLockSettingsAreReadAndCheckedAgainstEachOther() {
        FerretSettings settings = read(Map.of("ferret.daemon.mode", "hot_cold",
                "ferret.daemon.lock.monitoring-interval", "PT10S", "ferret.daemon.lock.probe-timeout", "PT2S",
                "ferret.daemon.lock.acquire-interval", "PT0.5S"));
        assertThat(settings.problems()).isEmpty();
        dev.ferret.daemon.DaemonSettings daemon = settings.applyTo(new dev.ferret.StoreOptions()).daemon();
        assertThat(daemon.getMode()).isEqualTo(dev.ferret.daemon.DaemonMode.HOT_COLD);
        assertThat(daemon.getMonitoringInterval()).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(daemon.getProbeTimeout()).isEqualTo(java.time.Duration.ofSeconds(2));
        assertThat(daemon.getLockAcquireInterval()).isEqualTo(java.time.Duration.ofMillis(500));

        assertThat(read(Map.of("ferret.daemon.lock.monitoring-interval", "PT2S",
                "ferret.daemon.lock.probe-timeout", "PT5S")).problems()).singleElement().asString()
                .contains("daemon.lock.probe-timeout (PT5S)").contains("daemon.lock.monitoring-interval (PT2S)");
    }

    @Test
    void tenantPartitioningAndTenancyDatabasesAreRead() {
        FerretSettings settings = read(Map.of(
                "ferret.events.partition-by-tenant", "true",
                "ferret.daemon.worker-threads", "16",
                "ferret.tenancy.databases", "east, west",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.tenants", "acme, globex",
                "ferret.tenancy.database.west.datasource", "jdbc/west",
                "ferret.tenancy.database.west.tenants", "initech"));
        assertThat(settings.problems()).isEmpty();
        StoreOptions options = settings.applyTo(new StoreOptions());
        assertThat(options.events().isPartitionedByTenant()).isTrue();
        assertThat(options.daemon().getWorkerThreads()).isEqualTo(16);
        assertThat(settings.tenancyDatabases()).containsExactly(
                new FerretSettings.TenancyDatabase("east", "jdbc/east", java.util.List.of("acme", "globex")),
                new FerretSettings.TenancyDatabase("west", "jdbc/west", java.util.List.of("initech")));
    }

    @Test
    void badTenancyFailsNamingTheKeyAndValue() {
        assertThat(read(Map.of("ferret.tenancy.databases", "east",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.tenants", "acme")).problems())
                .singleElement().asString().contains("ferret.tenancy.databases")
                .contains("ferret.events.partition-by-tenant=true");
        assertThat(read(Map.of("ferret.events.partition-by-tenant", "true", "ferret.tenancy.databases", "east",
                "ferret.tenancy.database.east.tenants", "acme")).problems())
                .singleElement().asString().contains("ferret.tenancy.database.east.datasource");
        // no tenants listed: fine with a TenantResolver bean to place them, refused naming the key without one
        FerretSettings resolved = read(Map.of("ferret.events.partition-by-tenant", "true",
                "ferret.tenancy.databases", "east", "ferret.tenancy.database.east.datasource", "jdbc/east"));
        assertThat(resolved.problems()).isEmpty();
        assertThat(resolved.tenancyProblems(true)).isEmpty();
        assertThat(resolved.tenancyProblems(false)).singleElement().asString()
                .contains("ferret.tenancy.database.east.tenants").contains("TenantResolver");
        assertThat(read(Map.of("ferret.events.partition-by-tenant", "true", "ferret.tenancy.databases", "east,west",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.tenants", "acme",
                "ferret.tenancy.database.west.datasource", "jdbc/west",
                "ferret.tenancy.database.west.tenants", "acme")).problems())
                .singleElement().asString().contains("'acme'").contains("east").contains("west");
        assertThat(read(Map.of("ferret.daemon.worker-threads", "0")).problems())
                .singleElement().asString().contains("ferret.daemon.worker-threads=0");
        assertThat(read(Map.of("ferret.events.partition-by-tenant", "yes")).problems())
                .singleElement().asString().contains("ferret.events.partition-by-tenant=yes");
    }

    @Test
    void theAppendLockTimeoutIsReadAndBadValuesNamed() {
        assertThat(read(Map.of()).applyTo(new StoreOptions()).events().getAppendLockTimeout())
                .isEqualTo(Duration.ofSeconds(10));
        FerretSettings settings = read(Map.of("ferret.events.append-lock-timeout", "PT30S"));
        assertThat(settings.problems()).isEmpty();
        assertThat(settings.applyTo(new StoreOptions()).events().getAppendLockTimeout())
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(read(Map.of("ferret.events.append-lock-timeout", "PT0S")).problems())
                .singleElement().asString().contains("ferret.events.append-lock-timeout=PT0S")
                .contains("positive");
        assertThat(read(Map.of("ferret.events.append-lock-timeout", "10s")).problems())
                .singleElement().asString().contains("ferret.events.append-lock-timeout=10s").contains("ISO-8601");
    }

    @Test
    void configuredFerretKeysThatNoSettingReadsAreNamedWithTheNearestKnownKey() {
        FerretSettings settings = read(Map.of("ferret.events.partition-by-tenant", "true",
                "ferret.tenancy.databases", "east",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.tenants", "acme"));
        assertThat(settings.unknownKeys(java.util.List.of("ferret.daemon.polling-intervall", "ferret.daemon.mode",
                "ferret.tenancy.database.east.tenants", "ferret.tenancy.database.west.tenants",
                "ferret.completely.different.thing", "mp.config.profile", "FERRET_DAEMON_MODE")))
                .containsExactly("ferret.completely.different.thing",
                        "ferret.daemon.polling-intervall (did you mean ferret.daemon.polling-interval?)",
                        "ferret.tenancy.database.west.tenants (did you mean ferret.tenancy.database.east.tenants?)");
    }

    @Test
    void everyDaemonSettingIsReadUnderItsDeclaredKey() {
        for (dev.ferret.daemon.Setting<?> setting : dev.ferret.daemon.DaemonSettings.settings()) {
            assertThat(FerretSettings.KEYS).extracting(FerretSettings.Key::name)
                    .contains(FerretSettings.PREFIX + setting.key());
        }
        assertThat(read(Map.of("ferret.daemon.stalled-shard-threshold", "PT0S")).problems()).singleElement()
                .asString().isEqualTo("Ferret configuration: ferret.daemon.stalled-shard-threshold=PT0S is refused:"
                        + " must be a positive duration");
    }

    @Test
    void aKeyThatNoLongerHasAnEffectIsNamedInADeploymentWarning() {
        assertThat(FerretSettings.keysWithoutEffect(List.of("ferret.daemon.append-fence-timeout",
                "ferret.daemon.polling-interval"))).singleElement().asString()
                .contains("ferret.daemon.append-fence-timeout").contains("no effect");
    }

    @Test
    void readReplicasAreReadForTheStoresOwnDatabaseAndEachTenancyDatabase() {
        FerretSettings settings = read(Map.of(
                "ferret.datasource", "jdbc/orders",
                "ferret.replica-datasource", "jdbc/orders-standby",
                "ferret.replica-catch-up-timeout", "PT0.25S",
                "ferret.events.partition-by-tenant", "true",
                "ferret.tenancy.databases", "east, west",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.replica-datasource", "jdbc/east-standby",
                "ferret.tenancy.database.east.tenants", "acme",
                "ferret.tenancy.database.west.datasource", "jdbc/west",
                "ferret.tenancy.database.west.tenants", "initech"));

        assertThat(settings.problems()).isEmpty();
        assertThat(settings.replicaDataSource()).isEqualTo("jdbc/orders-standby");
        assertThat(settings.applyTo(new StoreOptions()).getReplicaCatchUpTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(settings.tenancyDatabases()).containsExactly(
                new FerretSettings.TenancyDatabase("east", "jdbc/east", List.of("acme"), "jdbc/east-standby"),
                new FerretSettings.TenancyDatabase("west", "jdbc/west", List.of("initech")));
        assertThat(settings.unknownKeys(List.of("ferret.tenancy.database.east.replica-datasource",
                "ferret.replica-datasource", "ferret.replica-catch-up-timeout"))).isEmpty();
        assertThat(read(Map.of()).replicaDataSource()).isNull();
    }

    @Test
    void aReplicaNamingItsPrimarysDataSourceOrANegativeCatchUpIsRefusedWithItsKey() {
        assertThat(read(Map.of("ferret.datasource", "jdbc/orders", "ferret.replica-datasource", "jdbc/orders"))
                .problems()).singleElement().asString().contains("ferret.replica-datasource=jdbc/orders")
                .contains("primary");
        assertThat(read(Map.of("ferret.replica-catch-up-timeout", "-PT1S")).problems()).singleElement().asString()
                .contains("ferret.replica-catch-up-timeout");
        assertThat(read(Map.of("ferret.events.partition-by-tenant", "true", "ferret.tenancy.databases", "east",
                "ferret.tenancy.database.east.datasource", "jdbc/east",
                "ferret.tenancy.database.east.replica-datasource", "jdbc/east",
                "ferret.tenancy.database.east.tenants", "acme")).problems()).singleElement().asString()
                .contains("ferret.tenancy.database.east.replica-datasource=jdbc/east").contains("primary");
    }
}
