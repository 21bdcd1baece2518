package dev.ferret.runtime;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Read routing with a "replica" that is a second, independent database: what is written into one database only
 * shows which one each read used. Query sessions read the replica; units of work, the daemon and non-stale reads the
 * replica cannot be proven to have caught up with read the primary. On H2 (and SQL Server) no replica can be proven,
 * so a non-stale read goes to the primary at once; on PostgreSQL the stand-in is not replaying, so it goes there
 * once the catch-up bound has run out. The real standby is {@link StandbyReplicaConformanceTest}.
 */
@Tag("conformance")
class ReplicaRoutingConformanceTest {

    private static final Duration WITHIN = Duration.ofSeconds(30);

    public record Note(String id, String text) {
    }

    private static StoreOptions withNotes(StoreOptions options) {
        options.documents().register(Note.class);
        return withTally(options);
    }

    /** A store on the stand-in replica, daemon off: creates its schema and writes what only the replica holds. */
    private static DocumentStore replicaWriter(TestDatabase replica) {
        StoreOptions options = withNotes(fastDaemon(replica));
        options.daemon().mode(DaemonMode.DISABLED);
        return Ferret.createStore(options);
    }

    private static long nonStaleReads(ReplicaReads.Counts counts) {
        return counts.unprovable() + counts.fellBack();
    }

    @Test
    void querySessionsReadTheReplicaWhileUnitsOfWorkAndTheDaemonUseThePrimary() {
        try (TestDatabase db = TestDatabase.create("replicarouting");
             TestDatabase replicaDb = db.sibling("replica");
             DocumentStore replicaOnly = replicaWriter(replicaDb)) {
            try (DocumentSession session = replicaOnly.openSession()) {
                session.store(new Note("on-replica", "only the replica holds this"));
                session.events().append("replica-stream", new Tick(1));
                session.saveChanges();
            }
            StoreOptions options = withNotes(fastDaemon(db)).replica(replicaDb.dataSource())
                    .replicaCatchUpTimeout(Duration.ofMillis(200));
            try (DocumentStore store = Ferret.createStore(options)) {
                try (DocumentSession session = store.openSession()) {
                    session.store(new Note("on-primary", "written by a unit of work"));
                    session.saveChanges();
                }
                appendTicks(store, "ticks", 3);

                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Note.class, "on-replica")).isPresent();
                    assertThat(query.load(Note.class, "on-primary")).isEmpty();
                    assertThat(query.loadMany(Note.class, List.of("on-replica", "on-primary")))
                            .extracting(Note::id).containsExactly("on-replica");
                    assertThat(query.query(Note.class).toList()).extracting(Note::id).containsExactly("on-replica");
                    assertThat(query.query(Note.class).count()).isOne();
                    assertThat(query.fetchStream("replica-stream")).hasSize(1);
                    assertThat(query.fetchStream("ticks")).isEmpty();
                    assertThat(query.fetchStreamState("ticks")).isEmpty();
                }
                try (DocumentSession session = store.openSession()) {
                    assertThat(session.load(Note.class, "on-primary")).isPresent();
                    assertThat(session.load(Note.class, "on-replica")).isEmpty();
                    assertThat(session.query(Note.class).toList()).extracting(Note::id).containsExactly("on-primary");
                    assertThat(session.fetchStream("ticks")).hasSize(3);
                }
                // the daemon reads the primary's events and writes its projection there
                await().atMost(WITHIN).until(() -> {
                    try (DocumentSession session = store.openSession()) {
                        return session.load(Tally.class, "ticks").map(Tally::count).orElse(0L) == 3;
                    }
                });
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Tally.class, "ticks")).as("the replica never saw the daemon's work")
                            .isEmpty();
                }
                FerretDocumentStore ferret = (FerretDocumentStore) store;
                assertThat(ferret.replicaReads().counts().fromReplica()).isPositive();
                assertThat(nonStaleReads(ferret.replicaReads().counts())).isZero();

                // a non-stale query cannot be proven on the stand-in: it reads the primary
                try (QuerySession query = store.querySession()) {
                    assertThat(query.query(Tally.class).queryForNonStaleData(WITHIN).toList())
                            .extracting(Tally::id).containsExactly("ticks");
                }
                ReplicaReads.Counts counts = ferret.replicaReads().counts();
                assertThat(nonStaleReads(counts)).isOne();
                if (db.engine() != DatabaseEngine.POSTGRESQL) {
                    assertThat(counts.unprovable()).as("no engine but PostgreSQL reports a replay position").isOne();
                }

                // after a store-wide wait, later query sessions are held to it: here, the primary
                store.waitForNonStaleProjectionData(WITHIN);
                try (QuerySession query = store.querySession()) {
                    assertThat(query.load(Tally.class, "ticks")).isPresent();
                }
                assertThat(nonStaleReads(ferret.replicaReads().counts())).isEqualTo(2);
            }
        }
    }

    @Test
    void aTenancyDatabasesReplicaServesItsTenantsQuerySessionsOnly() {
        try (TestDatabase db = TestDatabase.create("replicatenancy");
             TestDatabase east = db.sibling("east");
             TestDatabase eastReplica = db.sibling("eastreplica");
             DocumentStore replicaOnly = replicaWriter(eastReplica)) {
            try (DocumentSession session = replicaOnly.openSession("acme")) {
                session.store(new Note("n", "on east's replica"));
                session.saveChanges();
            }
            StoreOptions options = withNotes(fastDaemon(db));
            options.events().partitionByTenant(true);
            options.tenancy().database("east", east.dataSource(), "acme").replica("east", eastReplica.dataSource());
            try (DocumentStore store = Ferret.createStore(options)) {
                try (DocumentSession session = store.openSession("acme")) {
                    session.store(new Note("n", "on east"));
                    session.saveChanges();
                }
                try (DocumentSession session = store.openSession()) {
                    session.store(new Note("n", "on the store's own"));
                    session.saveChanges();
                }
                try (QuerySession acme = store.querySession("acme");
                     QuerySession own = store.querySession()) {
                    assertThat(acme.load(Note.class, "n")).map(Note::text).contains("on east's replica");
                    assertThat(own.load(Note.class, "n")).map(Note::text).contains("on the store's own");
                }
                try (DocumentSession acme = store.openSession("acme")) {
                    assertThat(acme.load(Note.class, "n")).map(Note::text).contains("on east");
                }
            }
        }
    }
}
