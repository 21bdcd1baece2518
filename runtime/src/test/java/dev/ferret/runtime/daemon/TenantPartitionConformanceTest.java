package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.ConcurrencyException;
import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Tenant-partitioned events: a sequence, a mark and one shard per projection for each tenant. */
@Tag("conformance")
class TenantPartitionConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    static StoreOptions partitioned(TestDatabase db) {
        StoreOptions options = DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db));
        options.events().partitionByTenant(true);
        options.daemon().workerThreads(4);
        return options;
    }

    static void appendTicks(DocumentStore store, String tenant, String stream, int count) {
        try (DocumentSession session = store.openSession(tenant)) {
            for (int i = 1; i <= count; i++) {
                session.events().append(stream, new Tick(i));
            }
            session.saveChanges();
        }
    }

    /** tenant_seq of every event of {@code tenant}, in order. */
    static List<Long> tenantSequence(DataSource dataSource, TestDatabase db, String tenant) throws SQLException {
        List<Long> numbers = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT tenant_seq FROM " + db.table("pc_events")
                     + " WHERE tenant_id = ? ORDER BY tenant_seq")) {
            ps.setString(1, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    numbers.add(rs.getLong(1));
                }
            }
        }
        return numbers;
    }

    static Map<String, Long> progression(DataSource dataSource, TestDatabase db) throws SQLException {
        Map<String, Long> rows = new java.util.TreeMap<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT name, last_seq_id FROM "
                     + db.table("pc_event_progression") + " WHERE name LIKE 'Tally%'");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getLong(2));
            }
        }
        return rows;
    }

    @Test
    void eachTenantNumbersItsEventsWithoutGapsEvenAcrossRollbacks() throws Exception {
        try (TestDatabase db = TestDatabase.create("tseq");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            appendTicks(store, "a", "s1", 3);
            appendTicks(store, "b", "s1", 2);
            try (DocumentSession session = store.openSession("a")) {
                session.events().append("s1", 1, List.of(new Tick(99))); // stale expected version: rolled back
                assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class);
            }
            appendTicks(store, "a", "s2", 2);
            appendTicks(store, "b", "s2", 1);

            assertThat(tenantSequence(db.dataSource(), db, "a")).containsExactly(1L, 2L, 3L, 4L, 5L);
            assertThat(tenantSequence(db.dataSource(), db, "b")).containsExactly(1L, 2L, 3L);
        }
    }

    @Test
    void concurrentAppendsOfOneTenantGetDistinctConsecutiveNumbers() throws Exception {
        try (TestDatabase db = TestDatabase.create("tseqrace");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            int writers = 4;
            int each = 10;
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers);
            try {
                List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String stream = "w" + w;
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < each; i++) {
                            appendTicks(store, "busy", stream, 2);
                        }
                    }));
                }
                for (java.util.concurrent.Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            List<Long> expected = java.util.stream.LongStream.rangeClosed(1, writers * each * 2L).boxed().toList();
            assertThat(tenantSequence(db.dataSource(), db, "busy")).isEqualTo(expected);
        }
    }

    /**
     * Holds {@code tenant}'s sequence row from another transaction for {@code holdFor}, as a slow append of the
     * tenant would, while {@code work} runs; returns what {@code work} returned.
     */
    static <T> T whileTheTenantRowIsHeld(TestDatabase db, String tenant, Duration holdFor,
                                         java.util.concurrent.Callable<T> work) throws Exception {
        try (Connection holder = db.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement("UPDATE " + db.table("pc_tenant_sequences")
                    + " SET last_seq = last_seq WHERE tenant_id = ?")) {
                ps.setString(1, tenant);
                assertThat(ps.executeUpdate()).isOne();
            }
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
            try {
                java.util.concurrent.Future<T> result = pool.submit(work);
                Thread.sleep(holdFor.toMillis());
                holder.commit();
                return result.get(60, TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void appendsOfOneTenantWaitPastTheEnginesDefaultLockTimeoutAndNumberWithoutGaps() throws Exception {
        try (TestDatabase db = TestDatabase.create("tseqwait");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            appendTicks(store, "busy", "seed", 1);
            int writers = 8;
            int each = 5;
            // the row is held past H2's own lock timeout (2 s), then every writer contends for it at once
            whileTheTenantRowIsHeld(db, "busy", Duration.ofMillis(2_500), () -> {
                java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers);
                try {
                    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                    for (int w = 0; w < writers; w++) {
                        String stream = "w" + w;
                        done.add(pool.submit(() -> {
                            for (int i = 0; i < each; i++) {
                                appendTicks(store, "busy", stream, 2);
                            }
                        }));
                    }
                    for (java.util.concurrent.Future<?> f : done) {
                        f.get(60, TimeUnit.SECONDS); // none timed out on the row
                    }
                } finally {
                    pool.shutdownNow();
                }
                return null;
            });
            List<Long> expected = java.util.stream.LongStream.rangeClosed(1, 1 + writers * each * 2L).boxed().toList();
            assertThat(tenantSequence(db.dataSource(), db, "busy")).isEqualTo(expected);
        }
    }

    @Test
    void onH2AnAppendGivesUpOnABusyTenantAfterAppendLockTimeoutAndLeavesNoGap() throws Exception {
        try (TestDatabase db = TestDatabase.create("tseqbound")) {
            org.junit.jupiter.api.Assumptions.assumeTrue(db.engine() == dev.ferret.DatabaseEngine.H2,
                    "PostgreSQL and SQL Server wait as their own lock timeout says");
            StoreOptions options = partitioned(db);
            options.events().appendLockTimeout(Duration.ofMillis(200));
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "busy", "seed", 1);
                Throwable refused = whileTheTenantRowIsHeld(db, "busy", Duration.ofMillis(1_500), () -> {
                    try {
                        appendTicks(store, "busy", "late", 1);
                        return null;
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                assertThat(refused).isNotNull();
                appendTicks(store, "busy", "late", 1);
                assertThat(tenantSequence(db.dataSource(), db, "busy")).containsExactly(1L, 2L);
            }
        }
    }

    @Test
    void appendLockTimeoutRefusesValuesNamingTheKeyAndValue() {
        StoreOptions options = new StoreOptions();
        assertThat(options.events().getAppendLockTimeout()).isEqualTo(Duration.ofSeconds(10));
        for (Duration bad : java.util.Arrays.asList(null, Duration.ZERO, Duration.ofMillis(-1), Duration.ofDays(30))) {
            assertThatThrownBy(() -> options.events().appendLockTimeout(bad))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("events.append-lock-timeout").hasMessageContaining("was: " + bad);
        }
        assertThat(options.events().appendLockTimeout(Duration.ofSeconds(3)).getAppendLockTimeout())
                .isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void everyProjectionRunsOneShardPerTenantWithItsOwnProgressionAndMark() throws Exception {
        try (TestDatabase db = TestDatabase.create("tshards");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            appendTicks(store, "acme", "s", 7);
            appendTicks(store, "globex", "s", 3);
            appendTicks(store, "initech", "t", 5);
            store.waitForNonStaleProjectionData(WAIT);

            Map<String, ShardStatus> shards = store.daemon().status().shards().stream()
                    .collect(Collectors.toMap(ShardStatus::name, s -> s));
            assertThat(shards).containsOnlyKeys("Tally:All@acme", "Tally:All@globex", "Tally:All@initech");
            assertThat(shards.get("Tally:All@acme").highWaterMark()).isEqualTo(7);
            assertThat(shards.get("Tally:All@globex").highWaterMark()).isEqualTo(3);
            assertThat(shards.values()).allSatisfy(s -> assertThat(s.state()).isEqualTo(ShardState.RUNNING));
            assertThat(progression(db.dataSource(), db)).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "Tally:All@acme", 7L, "Tally:All@globex", 3L, "Tally:All@initech", 5L));
            assertThat(store.daemon().status().highWaterMark().mark()).isEqualTo(15);

            // a tenant seen for the first time while the daemon runs gets its shards
            appendTicks(store, "umbrella", "u", 2);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(progression(db.dataSource(), db)).containsEntry("Tally:All@umbrella", 2L);
        }
    }

    @Test
    void aTenantReadsOnlyItsOwnProjectedDocuments() {
        try (TestDatabase db = TestDatabase.create("tisolate");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            appendTicks(store, "acme", "shared-id", 4);
            appendTicks(store, "globex", "shared-id", 9);
            store.waitForNonStaleProjectionData(WAIT);
            try (QuerySession acme = store.querySession("acme");
                 QuerySession globex = store.querySession("globex");
                 QuerySession other = store.querySession("initech")) {
                assertThat(acme.load(Tally.class, "shared-id")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(4));
                assertThat(globex.load(Tally.class, "shared-id")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(9));
                assertThat(other.load(Tally.class, "shared-id")).isEmpty();
                assertThat(acme.query(Tally.class).toList()).hasSize(1);
            }
        }
    }

    @Test
    void oneTenantRebuildsAloneWhileTheOthersKeepTheirDocumentsAndProgress() throws Exception {
        try (TestDatabase db = TestDatabase.create("trebuild");
             DocumentStore store = Ferret.createStore(partitioned(db))) {
            appendTicks(store, "acme", "s", 6);
            appendTicks(store, "globex", "s", 4);
            store.waitForNonStaleProjectionData(WAIT);
            // damage acme's document and remember globex's row exactly
            db.execute("UPDATE " + db.table("pc_doc_tally") + " SET version = 999 WHERE tenant_id = 'acme'");
            long globexVersion = db.queryLong("SELECT version FROM " + db.table("pc_doc_tally")
                    + " WHERE tenant_id = 'globex'");

            List<dev.ferret.daemon.RebuildProgress> reports = new ArrayList<>();
            store.daemon().rebuild("Tally", "acme", WAIT, reports::add);

            assertThat(reports).last().satisfies(p -> {
                assertThat(p.shardName()).isEqualTo("Tally:All@acme");
                assertThat(p.eventsDone()).isEqualTo(6);
            });
            try (QuerySession acme = store.querySession("acme")) {
                assertThat(acme.load(Tally.class, "s")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(6));
            }
            assertThat(db.queryLong("SELECT version FROM " + db.table("pc_doc_tally") + " WHERE tenant_id = 'acme'"))
                    .as("rebuilt from scratch").isNotEqualTo(999);
            assertThat(db.queryLong("SELECT version FROM " + db.table("pc_doc_tally") + " WHERE tenant_id = 'globex'"))
                    .as("untouched").isEqualTo(globexVersion);

            // and processing goes on for both
            appendTicks(store, "acme", "s", 1);
            appendTicks(store, "globex", "s", 1);
            store.waitForNonStaleProjectionData(WAIT);
            assertThat(progression(db.dataSource(), db)).containsEntry("Tally:All@acme", 7L)
                    .containsEntry("Tally:All@globex", 5L);

            assertThatThrownBy(() -> store.daemon().rebuild("Tally", "nobody", WAIT, p -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nobody");
        }
    }

    @Test
    void aStalledTenantDoesNotHoldUpTheOthers() throws Exception {
        try (TestDatabase db = TestDatabase.create("tstall")) {
            // claims Tally documents, so a Tally query waits for it too
            DaemonFixtures.BlocksTenant slow = new DaemonFixtures.BlocksTenant("SlowForBig", "big", Tally.class);
            StoreOptions options = partitioned(db);
            options.projections().add(slow, Lifecycle.ASYNC);
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "big", "s", 20);
                assertThat(slow.entered.await(60, TimeUnit.SECONDS)).isTrue();
                appendTicks(store, "small", "s", 5);
                await().atMost(WAIT).until(() -> store.daemon().status().shards().stream()
                        .filter(s -> s.name().endsWith("@small")).allMatch(s -> s.progression() == 5));
                ShardStatus big = store.daemon().status().shards().stream()
                        .filter(s -> s.name().equals("SlowForBig:All@big")).findFirst().orElseThrow();
                assertThat(big.progression()).isZero();
                assertThat(big.state()).isEqualTo(ShardState.RUNNING);
                // a tenant's non-stale query waits for its own shards only
                try (QuerySession small = store.querySession("small")) {
                    assertThat(small.query(Tally.class).queryForNonStaleData(Duration.ofSeconds(30)).toList())
                            .singleElement().satisfies(t -> assertThat(t.count()).isEqualTo(5));
                }
                try (QuerySession bigSession = store.querySession("big")) {
                    assertThatThrownBy(() -> bigSession.query(Tally.class)
                            .queryForNonStaleData(Duration.ofMillis(300)).toList())
                            .isInstanceOf(dev.ferret.daemon.NonStaleTimeoutException.class)
                            .hasMessageContaining("SlowForBig:All@big");
                }
                slow.release.countDown();
                store.waitForNonStaleProjectionData(WAIT);
            }
        }
    }

    @Test
    void tenantsLiveInTheDatabaseTheyAreMappedTo() throws Exception {
        try (TestDatabase db = TestDatabase.create("tdbs");
             TestDatabase far = db.sibling("far")) {
            StoreOptions options = partitioned(db);
            options.tenancy().database("far", far.dataSource(), "remote-1", "remote-2");
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "local", "s", 3);
                appendTicks(store, "remote-1", "s", 4);
                appendTicks(store, "remote-2", "s", 2);
                store.waitForNonStaleProjectionData(WAIT);

                assertThat(tenantSequence(db.dataSource(), db, "remote-1")).isEmpty();
                assertThat(tenantSequence(far.dataSource(), far, "remote-1")).containsExactly(1L, 2L, 3L, 4L);
                assertThat(tenantSequence(far.dataSource(), far, "local")).isEmpty();
                assertThat(progression(db.dataSource(), db)).containsOnlyKeys("Tally:All@local");
                assertThat(progression(far.dataSource(), far)).containsExactlyInAnyOrderEntriesOf(Map.of(
                        "Tally:All@remote-1", 4L, "Tally:All@remote-2", 2L));
                assertThat(far.queryLong("SELECT COUNT(*) FROM " + far.table("pc_doc_tally"))).isEqualTo(2);
                try (QuerySession remote = store.querySession("remote-1")) {
                    assertThat(remote.load(Tally.class, "s"))
                            .hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(4));
                }
                store.daemon().rebuild("Tally", "remote-2", WAIT, p -> { });
                assertThat(progression(far.dataSource(), far)).containsEntry("Tally:All@remote-2", 2L);
            }
        }
    }

    @Test
    void anUnreadableTenantDatabaseIsNamedInStatusAndHoldsOnlyItsOwnTenants() throws Exception {
        try (TestDatabase db = TestDatabase.create("tdbdown");
             TestDatabase far = db.sibling("far")) {
            FlakyDataSource farLink = new FlakyDataSource(far.dataSource());
            StoreOptions options = partitioned(db);
            options.tenancy().database("far", farLink, "remote");
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "local", "s", 2);
                appendTicks(store, "remote", "s", 2);
                store.waitForNonStaleProjectionData(WAIT);

                farLink.down(true);
                await().atMost(WAIT).until(() -> !store.daemon().status().healthy());
                var mark = store.daemon().status().highWaterMark();
                assertThat(mark.healthy()).isFalse();
                assertThat(mark.error()).hasMessageContaining("tenant database 'far' cannot be read");

                // the default database's tenants go on, and their waits do not depend on the far one
                appendTicks(store, "local", "s", 3);
                try (QuerySession local = store.querySession("local")) {
                    assertThat(local.query(Tally.class).queryForNonStaleData(WAIT).toList())
                            .singleElement().satisfies(t -> assertThat(t.count()).isEqualTo(5));
                }
                try (QuerySession remote = store.querySession("remote")) {
                    assertThatThrownBy(() -> remote.query(Tally.class).queryForNonStaleData(Duration.ofSeconds(5))
                            .toList()).hasMessageContaining("far");
                }

                farLink.down(false);
                await().atMost(WAIT).until(() -> store.daemon().status().healthy());
                appendTicks(store, "remote", "s", 1);
                store.waitForNonStaleProjectionData(WAIT);
                try (QuerySession remote = store.querySession("remote")) {
                    assertThat(remote.load(Tally.class, "s")).hasValueSatisfying(t -> assertThat(t.count()).isEqualTo(3));
                }
            }
        }
    }

    @Test
    void tenancyMisconfigurationsFailAtStartupNamingWhatIsWrong() {
        try (TestDatabase db = TestDatabase.create("tbad");
             TestDatabase far = db.sibling("far")) {
            StoreOptions unpartitioned = DaemonFixtures.fastDaemon(db);
            unpartitioned.tenancy().database("far", far.dataSource(), "t1");
            assertThatThrownBy(() -> Ferret.createStore(unpartitioned))
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("far")
                    .hasMessageContaining("partitionByTenant");

            StoreOptions twice = partitioned(db);
            twice.tenancy().database("far", far.dataSource(), "t1");
            assertThatThrownBy(() -> twice.tenancy().database("farther", far.dataSource(), "t1"))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("'t1'").hasMessageContaining("far").hasMessageContaining("farther");
            assertThatThrownBy(() -> twice.tenancy().database("default", far.dataSource(), "t2"))
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("default");
            assertThatThrownBy(() -> twice.tenancy().database("bad name", far.dataSource(), "t3"))
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("bad name");
        }
    }

    @Test
    void aTenantShardsApplyErrorNamesTheTenantsNumberAndTheStoreWideSequence() throws Exception {
        try (TestDatabase db = TestDatabase.create("tnumbers")) {
            try (DocumentStore store = Ferret.createStore(partitioned(db))) {
                appendTicks(store, "other", "s", 5);
                appendTicks(store, "acme", "s", 2);
                try (DocumentSession session = store.openSession("acme")) {
                    session.events().append("s", new DaemonFixtures.Poison("bad"));
                    session.saveChanges();
                }
                long sequence = store.querySession("acme").fetchStream("s").get(2).sequence();
                await().atMost(WAIT).until(() -> store.daemon().status().shard("Tally:All@acme").orElseThrow()
                        .state() == ShardState.PAUSED);
                var shard = store.daemon().status().shard("Tally:All@acme").orElseThrow();
                assertThat(shard.progression()).isLessThan(3);
                assertThat(shard.error()).hasMessageContaining("at sequence " + sequence)
                        .hasMessageContaining("number 3 of tenant 'acme'");
            }
        }
    }

    @Test
    void rebuildingOneTenantNeedsPartitionedEvents() {
        try (TestDatabase db = TestDatabase.create("tnopart");
             DocumentStore store = Ferret.createStore(DaemonFixtures.withTally(DaemonFixtures.fastDaemon(db)))) {
            assertThatThrownBy(() -> store.daemon().rebuild("Tally", "acme", WAIT, p -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitionByTenant");
        }
    }
}
