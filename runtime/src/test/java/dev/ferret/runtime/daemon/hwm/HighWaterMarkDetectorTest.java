package dev.ferret.runtime.daemon.hwm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.MutableClock;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The detector's time rules on a hand-moved clock: a hole holds the mark until it is stale, a stale hole is passed
 * once the fence proves it permanent, and a fence that cannot be had stalls the mark until the forced-skip threshold.
 */
@Tag("conformance")
class HighWaterMarkDetectorTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final DaemonSettings settings = new DaemonSettings()
            .staleSequenceThreshold(Duration.ofSeconds(3))
            .appendFenceTimeout(Duration.ofMillis(100))
            .forcedGapSkipThreshold(Duration.ofSeconds(60));
    private TestDatabase db;
    private FerretDocumentStore store;
    private HighWaterMarkDetector detector;

    @BeforeEach
    void start() {
        db = TestDatabase.create("hwm");
        store = Ferret.createStore(db.options().events().register(Tick.class).and(),
                StoreSeams.defaults().withClock(clock));
        detector = new HighWaterMarkDetector(store.dataSource(), store.dialect(), store.names(), settings, clock);
    }

    @AfterEach
    void stop() {
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
            session.events().append("rolled-back", new Tick(1), new Tick(2));
            session.events().append("missing", 4, List.of(new Tick(3)));
            session.saveChanges();
        } catch (ConcurrencyException expected) {
            // the two ticks drew sequence numbers and rolled back
        }
    }

    @Test
    void skipTotalsCountEveryGapWhileRecentSkipsKeepABoundedWindow() throws Exception {
        for (int i = 0; i < 25; i++) {
            appendAndRollBack();
            append("a");
        }
        detector.detect();
        clock.advance(Duration.ofSeconds(4));
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
    void aHoleHoldsTheMarkUntilStaleThenThePermanentHoleIsPassedAndRecorded() throws Exception {
        append("a");
        appendAndRollBack();
        append("a");
        detector.detect();
        assertThat(detector.mark()).isEqualTo(1);

        clock.advance(Duration.ofMillis(2_900));
        detector.detect();
        assertThat(detector.mark()).as("not stale yet").isEqualTo(1);

        clock.advance(Duration.ofMillis(200));
        detector.detect();
        assertThat(detector.mark()).isEqualTo(4);
        assertThat(detector.status().recentSkips()).singleElement().satisfies(skip -> {
            assertThat(skip.fromSequence()).isEqualTo(2);
            assertThat(skip.toSequence()).isEqualTo(3);
            assertThat(skip.reason()).startsWith("rolled back");
            assertThat(skip.at()).isEqualTo(clock.instant());
        });
        assertThat(detector.status().stalled()).isFalse();
    }

    @Test
    void anOpenAppendStallsTheMarkAndOnlyTheForcedThresholdSkipsIt() throws Exception {
        append("a");
        appendAndRollBack();
        append("a");
        // an append transaction that never ends holds the fence in shared mode
        try (Connection open = store.dataSource().getConnection()) {
            open.setAutoCommit(false);
            Runnable release = store.dialect().takeAppendFenceShared(open, store.names());
            try {
                detector.detect();
                clock.advance(Duration.ofSeconds(5));
                detector.detect();
                assertThat(detector.mark()).isEqualTo(1);
                assertThat(detector.status().stalled()).isTrue();
                assertThat(detector.status().stalledFor()).isEqualTo(Duration.ofSeconds(5));

                clock.advance(Duration.ofSeconds(60));
                detector.detect();
                assertThat(detector.status().recentSkips()).singleElement()
                        .satisfies(skip -> assertThat(skip.reason()).startsWith("forced"));
                detector.detect();
                assertThat(detector.mark()).isEqualTo(4);
            } finally {
                open.rollback();
                release.run();
            }
        }
    }

    @Test
    void theMarkIsPersistedSoARestartDoesNotWaitOnOldHoles() throws Exception {
        append("a");
        appendAndRollBack();
        append("a");
        detector.detect();
        clock.advance(Duration.ofSeconds(4));
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
