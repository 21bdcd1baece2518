package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.daemon.DaemonFixtures;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.PostgresStandby;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Read replicas on a real PostgreSQL hot standby: the test starts a primary and a streaming standby of its own
 * ({@link PostgresStandby}), so it runs in the PostgreSQL conformance run ({@code -Ppostgres}) and fails there when
 * it cannot start them; the H2 run leaves it out. It shows that query sessions read the standby, that a non-stale
 * query sees what the daemon just committed (from the standby when it is proven caught up, else from the primary,
 * counted either way), and that with the standby's replay paused a non-stale read still gets the fresh data from the
 * primary once the catch-up bound has run out.
 */
@Tag("conformance")
@EnabledIfSystemProperty(named = "ferret.test.db", matches = "postgres|postgresql")
class StandbyReplicaConformanceTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static final Duration CATCH_UP = Duration.ofMillis(500);

    public record Note(String id, String text) {
    }

    private static HikariDataSource pool(String url, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setPoolName(name);
        config.setMaximumPoolSize(12);
        return new HikariDataSource(config);
    }

    private static StoreOptions options(DataSource primary, DataSource standby) {
        StoreOptions options = new StoreOptions().dataSource(primary).replica(standby)
                .replicaCatchUpTimeout(CATCH_UP).applyAllDatabaseChangesOnStartup(true);
        options.documents().register(Note.class);
        options.events().register(Tick.class);
        options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.ASYNC);
        options.daemon().mode(DaemonMode.SOLO).pollingInterval(Duration.ofMillis(50))
                .transientRetryBackoff(Duration.ofMillis(20)).maxRetryBackoff(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(2));
        return options;
    }

    private static String text(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void store(DocumentStore store, Note note) {
        try (DocumentSession session = store.openSession()) {
            session.store(note);
            session.saveChanges();
        }
    }

    private static void ticks(DocumentStore store, String stream, int count) {
        try (DocumentSession session = store.openSession()) {
            for (int i = 0; i < count; i++) {
                session.events().append(stream, new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static List<Long> nonStaleTally(DocumentStore store, String stream) {
        try (QuerySession query = store.querySession()) {
            return query.query(Tally.class).where("id", stream).queryForNonStaleData(WITHIN).toList().stream()
                    .map(Tally::count).toList();
        }
    }

    @Test
    void queriesReadTheStandbyAndNonStaleReadsAreFreshFromItOrFromThePrimaryWhenItsReplayIsPaused()
            throws SQLException {
        try (PostgresStandby clusters = PostgresStandby.start();
             HikariDataSource primary = pool(clusters.primaryUrl(), "standby-test-primary");
             HikariDataSource standby = pool(clusters.standbyUrl(), "standby-test-standby")) {
            assertThat(text(standby, "SELECT pg_is_in_recovery()::text")).isEqualTo("true");
            try (DocumentStore store = Ferret.createStore(options(primary, standby))) {
                ReplicaReads reads = ((FerretDocumentStore) store).replicaReads();

                // a query session reads the standby: what replays there is seen, and with replay paused a write
                // on the primary is not
                store(store, new Note("first", "replicated"));
                await().atMost(WITHIN).until(() -> {
                    try (QuerySession query = store.querySession()) {
                        return query.load(Note.class, "first").isPresent();
                    }
                });
                text(standby, "SELECT pg_wal_replay_pause()::text");
                await().atMost(WITHIN).until(() -> "paused".equals(
                        text(standby, "SELECT pg_get_wal_replay_pause_state()")));
                store(store, new Note("second", "not replayed yet"));
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Note.class, "second")).as("the paused standby served the read").isEmpty();
                    assertThat(query.query(Note.class).toList()).extracting(Note::id).containsExactly("first");
                }
                try (DocumentSession session = store.openSession()) {
                    assertThat(session.load(Note.class, "second")).as("a unit of work reads the primary").isPresent();
                }
                text(standby, "SELECT pg_wal_replay_resume()::text");
                assertThat(reads.counts().fromReplica()).isPositive();

                // a non-stale query sees what the daemon just committed, from the standby if proven caught up
                ReplicaReads.Counts before = reads.counts();
                ticks(store, "t", 3);
                assertThat(nonStaleTally(store, "t")).containsExactly(3L);
                ReplicaReads.Counts after = reads.counts();
                long caughtUp = after.caughtUp() - before.caughtUp();
                long fellBack = after.fellBack() - before.fellBack();
                assertThat(caughtUp + fellBack).as("one non-stale read, on one path: %s", after).isOne();
                assertThat(after.unprovable()).isZero();
                assertThat(after.fromReplica() - before.fromReplica()).isEqualTo(caughtUp);

                // replay paused: the non-stale read waits out the bound, then reads the fresh data on the primary
                text(standby, "SELECT pg_wal_replay_pause()::text");
                await().atMost(WITHIN).until(() -> "paused".equals(
                        text(standby, "SELECT pg_get_wal_replay_pause_state()")));
                ticks(store, "t", 2);
                before = reads.counts();
                long started = System.nanoTime();
                assertThat(nonStaleTally(store, "t")).containsExactly(5L);
                after = reads.counts();
                assertThat(after.fellBack() - before.fellBack()).isOne();
                assertThat(after.caughtUp() - before.caughtUp()).isZero();
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(WITHIN);
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Tally.class, "t")).as("a plain query session still reads the paused standby")
                            .map(Tally::count).isNotEqualTo(Optional.of(5L));
                }

                // a store-wide wait holds later sessions to it: the primary while paused, the standby once resumed
                store.waitForNonStaleProjectionData(WITHIN);
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Tally.class, "t")).map(Tally::count).contains(5L);
                }
                assertThat(reads.counts().fellBack() - after.fellBack()).isOne();
                text(standby, "SELECT pg_wal_replay_resume()::text");
                await().atMost(WITHIN).until(() -> {
                    long caught = reads.counts().caughtUp();
                    try (QuerySession query = store.querySession()) {
                        return query.load(Tally.class, "t").map(Tally::count).orElse(0L) == 5
                                && reads.counts().caughtUp() > caught;
                    }
                });
            }
        }
    }
}
