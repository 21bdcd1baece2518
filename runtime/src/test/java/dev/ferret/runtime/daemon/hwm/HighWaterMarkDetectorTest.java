package dev.ferret.runtime.daemon.hwm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Hold;
import dev.ferret.runtime.daemon.DaemonFixtures.Holder;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.daemon.DaemonFixtures;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.SequencesPassedException;
import dev.ferret.runtime.testing.MutableClock;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The detector's rules on a hand-moved clock, against the engine under test: a hole is left to its append for one
 * grace (the polling interval), then its owner is asked. An owned hole holds the mark (a stall past the stale
 * threshold) while other appends go on, until its owner ends or the forced-skip threshold; an ownerless hole is
 * passed and recorded; an append that drew numbers the detector passed before it registered them rolls back.
 */
@Tag("conformance")
class HighWaterMarkDetectorTest {

    private static final Duration GRACE = Duration.ofMillis(500);

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final DaemonSettings settings = new DaemonSettings()
            .pollingInterval(GRACE)
            .staleSequenceThreshold(Duration.ofSeconds(3))
            .forcedGapSkipThreshold(Duration.ofSeconds(60));
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private TestDatabase db;
    private FerretDocumentStore store;
    private HighWaterMarkDetector detector;

    @BeforeEach
    void start() {
        db = TestDatabase.create("hwm");
        StoreOptions options = db.options().events().register(Tick.class).register(Hold.class).and();
        options.projections().add(new Holder(), Lifecycle.INLINE);
        store = (FerretDocumentStore) Ferret.createStore(options, StoreSeams.defaults().withClock(clock));
        detector = new HighWaterMarkDetector(store.dataSource(), store.dialect(), store.names(), settings, clock);
    }

    @AfterEach
    void stop() {
        DaemonFixtures.LATCHES.values().forEach(CountDownLatch::countDown);
        DaemonFixtures.LATCHES.clear();
        DaemonFixtures.ENTERED.clear();
        pool.shutdownNow();
        store.close();
        db.close();
    }

    private void append(String stream) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new Tick(1));
            session.saveChanges();
        }
    }

    private void appendAndRollBack() {
        try (DocumentSession session = store.openSession()) {
            session.events().append("rolled-back", new Tick(1), DaemonFixtures.VETO);
            session.saveChanges();
        } catch (ApplyFailedException expected) {
            // the two events drew sequence numbers and rolled back
        }
    }

    /** Starts an append whose transaction stays open, its one number drawn and owned, until {@code latch} opens. */
    private CompletableFuture<Void> holdOpen(String latch) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        DaemonFixtures.ENTERED.put(latch, entered);
        DaemonFixtures.LATCHES.put(latch, new CountDownLatch(1));
        CompletableFuture<Void> held = CompletableFuture.runAsync(() -> {
            try (DocumentSession session = store.openSession()) {
                session.events().append("held-" + latch, new Hold(latch));
                session.saveChanges();
            }
        }, pool);
        assertThat(entered.await(30, TimeUnit.SECONDS)).as("the held append reached its inline projection").isTrue();
        return held;
    }

    @Test
    void skipTotalsCountEveryGapWhileRecentSkipsKeepABoundedWindow() throws Exception {
        for (int i = 0; i < 25; i++) {
            appendAndRollBack();
            append("a");
        }
        detector.detect();
        clock.advance(GRACE);
        detector.detect();
        assertThat(detector.mark()).isEqualTo(75);
        assertThat(detector.status().recentSkips()).hasSize(20);
        assertThat(detector.status().totalSkips()).isEqualTo(25);
        assertThat(detector.status().totalSkippedSequences()).isEqualTo(50);
    }

    @Test
    void theMarkFollowsAContiguousLog() throws Exception {
        assertThat(detector.detect()).isFalse();
        append("a");
        append("a");
        assertThat(detector.detect()).isTrue();
        assertThat(detector.mark()).isEqualTo(2);
        assertThat(detector.status().healthy()).isTrue();
    }

    @Test
    void aRolledBackHoleIsPassedOneGraceAfterItWasSeenWithoutWaitingForTheStaleThreshold() throws Exception {
        append("a");
        appendAndRollBack();
        append("a");
        detector.detect();
        assertThat(detector.mark()).isEqualTo(1);

        clock.advance(GRACE.minusMillis(100));
        detector.detect();
        assertThat(detector.mark()).as("within the grace its append may still be registering").isEqualTo(1);

        clock.advance(Duration.ofMillis(100));
        detector.detect();
        assertThat(detector.mark()).isEqualTo(4);
        assertThat(detector.status().recentSkips()).singleElement().satisfies(skip -> {
            assertThat(skip.fromSequence()).isEqualTo(2);
            assertThat(skip.toSequence()).isEqualTo(3);
            assertThat(skip.reason()).startsWith("rolled back");
            assertThat(skip.at()).isEqualTo(clock.instant());
        });
        assertThat(detector.status().stalled()).isFalse();
        assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                + " WHERE name = 'HighWaterMark'")).as("persisted in the claim's transaction").isEqualTo(4);
    }

    @Test
    void anOwnedHoleHoldsTheMarkWhileOtherAppendsCompleteAndOnlyTheForcedThresholdSkipsIt() throws Exception {
        append("a");
        CompletableFuture<Void> held = holdOpen("forced");
        // other appends are not made to wait by the open one, nor by the detector asking about its hole
        CompletableFuture.runAsync(() -> {
            append("b");
            append("b");
        }, pool).get(10, TimeUnit.SECONDS);
        detector.detect();
        clock.advance(GRACE);
        detector.detect();
        CompletableFuture.runAsync(() -> append("b"), pool).get(10, TimeUnit.SECONDS);
        clock.advance(Duration.ofSeconds(5));
        detector.detect();
        assertThat(detector.mark()).as("held at the hole the open append owns").isEqualTo(1);
        assertThat(detector.status().recentSkips()).isEmpty();
        assertThat(detector.status().stalled()).isTrue();
        assertThat(detector.status().stalledFor()).isEqualTo(Duration.ofSeconds(5).plus(GRACE));

        clock.advance(Duration.ofSeconds(60));
        detector.detect();
        assertThat(detector.status().recentSkips()).singleElement()
                .satisfies(skip -> assertThat(skip.reason()).startsWith("forced"));
        detector.detect();
        assertThat(detector.mark()).isEqualTo(5);
        DaemonFixtures.LATCHES.get("forced").countDown();
        held.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aHoleWhoseOwnerCommitsIsFilledNeverSkipped() throws Exception {
        append("a");
        CompletableFuture<Void> held = holdOpen("commits");
        appendAndRollBack();
        append("b");
        detector.detect();
        clock.advance(Duration.ofSeconds(10));
        detector.detect();
        assertThat(detector.mark()).isEqualTo(1);
        assertThat(detector.status().stalled()).isTrue();

        DaemonFixtures.LATCHES.get("commits").countDown();
        held.get(30, TimeUnit.SECONDS);
        detector.detect();
        clock.advance(GRACE);
        detector.detect();
        assertThat(detector.mark()).isEqualTo(5);
        assertThat(detector.status().recentSkips()).singleElement().satisfies(skip -> {
            assertThat(skip.fromSequence()).as("only the rolled-back numbers").isEqualTo(3);
            assertThat(skip.toSequence()).isEqualTo(4);
        });
        assertThat(detector.status().stalled()).isFalse();
    }

    @Test
    void anAppendWhoseNumbersWerePassedBeforeItRegisteredThemRollsBack() throws Exception {
        append("a");
        // an append that has drawn its number (the insert ran) and not yet taken its owner lock: the race window
        try (Connection late = store.dataSource().getConnection()) {
            late.setAutoCommit(false);
            insertUnowned(late, "late");
            append("a");
            detector.detect();
            clock.advance(GRACE);
            detector.detect();
            assertThat(detector.mark()).as("the hole looked ownerless and was passed").isEqualTo(3);

            assertThatThrownBy(() -> store.dialect().ownAppendedSequences(late, store.names(), store.eventSql(),
                    StoreOptions.DEFAULT_TENANT, List.of(new AppendedRange("late", 1, 1)))).isInstanceOf(SequencesPassedException.class);
            late.rollback();
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events") + " WHERE stream_id = 'late'"))
                .as("never committed, so nothing was lost").isZero();
    }

    @Test
    void anAppendWhoseOwnerLockWaitedForADetectorThatPassedItsNumberSeesThatMarkAndRollsBack() throws Exception {
        append("a");
        detector.detect();
        try (Connection late = db.dataSource().getConnection();
             Connection claim = db.dataSource().getConnection()) {
            late.setAutoCommit(false);
            insertUnowned(late, "late");
            long drawn;
            // read on the appending connection: nobody else sees the uncommitted row
            try (PreparedStatement ps = late.prepareStatement("SELECT MAX(seq_id) FROM " + store.names().events());
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                drawn = rs.getLong(1);
            }
            // the detector's side, by hand: it claimed the hole and raised the mark past it, not yet committed
            claim.setAutoCommit(false);
            assertThat(store.dialect().tryClaimSequences(claim, store.names(),
                    store.dialect().daemonSql(store.names()), drawn, drawn))
                    .as("the hole's owner lock was free").isTrue();
            try (PreparedStatement ps = claim.prepareStatement("UPDATE " + store.names().progression()
                    + " SET last_seq_id = ? WHERE name = 'HighWaterMark'")) {
                ps.setLong(1, drawn);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            CompletableFuture<Void> owning = CompletableFuture.runAsync(() -> {
                try {
                    store.dialect().ownAppendedSequences(late, store.names(), store.eventSql(),
                            StoreOptions.DEFAULT_TENANT, List.of(new AppendedRange("late", 1, 1)));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
            if (db.engine() != DatabaseEngine.H2) {
                // the owner lock is the detector's until it commits: the append waits
                assertThatThrownBy(() -> owning.get(300, TimeUnit.MILLISECONDS))
                        .as("the append waits for the detector's owner lock").isInstanceOf(TimeoutException.class);
            }
            // H2 keeps owners in this JVM: the claim itself refuses the number, before any commit
            claim.commit();
            assertThatThrownBy(() -> owning.get(30, TimeUnit.SECONDS))
                    .hasRootCauseInstanceOf(SequencesPassedException.class);
            late.rollback();
        }
    }

    private void insertUnowned(Connection c, String stream) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(store.eventSql().insertEvent())) {
            store.dialect().bindUuid(ps, 1, UUID.randomUUID());
            ps.setString(2, stream);
            ps.setLong(3, 1);
            ps.setString(4, "tick");
            ps.setString(5, "{\"n\":1}");
            ps.setObject(6, OffsetDateTime.now(clock));
            ps.setString(7, StoreOptions.DEFAULT_TENANT);
            ps.setNull(8, Types.BIGINT);
            ps.setNull(9, Types.VARCHAR);
            ps.setNull(10, Types.VARCHAR);
            ps.setNull(11, Types.VARCHAR);
            ps.executeUpdate();
        }
    }

    @Test
    void theMarkIsPersistedSoARestartDoesNotWaitOnOldHoles() throws Exception {
        append("a");
        appendAndRollBack();
        append("a");
        detector.detect();
        clock.advance(GRACE);
        detector.detect();
        assertThat(detector.mark()).isEqualTo(4);

        HighWaterMarkDetector restarted = new HighWaterMarkDetector(store.dataSource(), store.dialect(),
                store.names(), settings, clock);
        restarted.loadPersistedMark();
        assertThat(restarted.mark()).isEqualTo(4);
        append("a");
        restarted.detect();
        assertThat(restarted.mark()).isEqualTo(5);
    }
}

