package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.withTally;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.DaemonFixtures.Gate;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import dev.ferret.runtime.testing.VirtualTime;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What status and liveness tell about shards that cannot move, events that cannot be read, and dead nodes. */
@Tag("conformance")
class DaemonHealthConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final TestResources resources = new TestResources();

    @AfterEach
    void closeAll() throws Exception {
        resources.close();
    }

    private TestDatabase database(String label) {
        return resources.database(label);
    }

    private DocumentStore open(StoreOptions options) {
        return resources.add(Ferret.createStore(options));
    }

    private static ShardStatus shard(DocumentStore store, String name) {
        return store.daemon().status().shard(name).orElseThrow();
    }

    @Test
    void aRunningShardBehindItsMarkThatCommitsNothingTurnsLivenessDownNamingIt() {
        TestDatabase db = database("stalled");
        Gate gate = new Gate();
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().stalledShardThreshold(Duration.ofMillis(500));
        options.projections().add(gate, Lifecycle.ASYNC);
        DocumentStore store = open(options);
        appendTicks(store, "x", 3);
        await().atMost(WAIT).until(() -> store.querySession().load(Tally.class, "x").map(Tally::count).orElse(0L) == 3);
        assertThat(shard(store, "Tally:All").sinceLastCommit()).isNotNull();

        await().atMost(WAIT).until(() -> !store.daemon().status().live());
        DaemonStatus down = store.daemon().status();
        assertThat(down.livenessProblems()).singleElement().asString()
                .contains("Gate:All").contains("daemon.stalled-shard-threshold");
        assertThat(shard(store, "Gate:All").state()).isEqualTo(ShardState.RUNNING);
        assertThat(shard(store, "Gate:All").stalledFor()).isGreaterThan(Duration.ofMillis(500));
        assertThat(shard(store, "Tally:All").stalledFor()).isZero();

        gate.release.countDown();
        await().atMost(WAIT).until(() -> store.daemon().status().live());
        assertThat(shard(store, "Gate:All").lag()).isZero();
    }

    @Test
    void anIdleShardIsNotStalledHoweverLongAgoItLastCommitted() throws Exception {
        TestDatabase db = database("idle");
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().stalledShardThreshold(Duration.ofMillis(300));
        VirtualTime time = new VirtualTime();
        DocumentStore store = resources.add(Ferret.createStore(options, StoreSeams.defaults().withTime(time)));
        appendTicks(store, "i", 2);
        store.waitForNonStaleProjectionData(WAIT);
        time.advance(Duration.ofMillis(600));
        // the shard was caught up all along: new events start its clock afresh
        appendTicks(store, "i", 2);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(store.daemon().status().live()).isTrue();
        assertThat(store.daemon().status().heartbeatAge()).isLessThan(
                options.daemon().detectorHeartbeatBound());
    }

    private static void garble(TestDatabase db, long sequence) {
        // valid JSON that no longer fits Tick(int n): a newer application wrote another shape
        String json = db.engine() == DatabaseEngine.H2 ? "'{\"n\":\"not a number\"}' FORMAT JSON"
                : "'{\"n\":\"not a number\"}'";
        db.execute("UPDATE " + db.table("pc_events") + " SET data = " + json + " WHERE seq_id = " + sequence);
    }

    /** Appends three ticks to stream g with no daemon running and garbles the second; returns its sequence. */
    private long threeTicksTheSecondGarbled(TestDatabase db) {
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().mode(DaemonMode.DISABLED);
        DocumentStore writer = open(options);
        appendTicks(writer, "g", 3);
        long poisoned = writer.querySession().fetchStream("g").get(1).sequence();
        garble(db, poisoned);
        return poisoned;
    }

    @Test
    void anEventWhoseJsonNoLongerFitsItsTypePausesTheShardNamingSequenceStreamAndType() {
        TestDatabase db = database("garbled");
        long poisoned = threeTicksTheSecondGarbled(db);

        StoreOptions daemon = withTally(fastDaemon(db));
        DocumentStore store = open(daemon);
        await().atMost(WAIT).until(() -> shard(store, "Tally:All").state() == ShardState.PAUSED);
        assertThat(shard(store, "Tally:All").error()).isInstanceOf(ApplyFailedException.class)
                .hasMessageContaining("sequence " + poisoned).hasMessageContaining("stream 'g'")
                .hasMessageContaining("Tick");
        // a restart would pause at the same event: live, not healthy, and the problem names the shard only
        DaemonStatus status = store.daemon().status();
        assertThat(status.live()).isTrue();
        assertThat(status.healthy()).isFalse();
        assertThat(status.problems()).singleElement().asString().contains("Tally:All").contains("paused")
                .doesNotContain("stream 'g'").doesNotContain("not a number");
    }

    @Test
    void withSkipApplyErrorsAnEventWhoseJsonNoLongerFitsGoesToTheDeadLettersOnce() {
        TestDatabase db = database("garbledskip");
        long poisoned = threeTicksTheSecondGarbled(db);

        StoreOptions daemon = withTally(fastDaemon(db));
        daemon.daemon().skipApplyErrors(true);
        DocumentStore store = open(daemon);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(store.querySession().load(Tally.class, "g").orElseThrow().count()).isEqualTo(2);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters")
                + " WHERE projection = 'Tally:All' AND seq_id = " + poisoned)).isOne();
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters"))).isOne();
        assertThat(shard(store, "Tally:All").state()).isEqualTo(ShardState.RUNNING);
    }

    @Test
    void heartbeatRowsOfNodesLongGoneAreRemovedAndLiveOnesKeptAndAProjectionNamedNodeKeepsItsProgression() {
        TestDatabase db = database("deadnodes");
        StoreOptions options = withTally(fastDaemon(db));
        options.daemon().mode(DaemonMode.HOT_COLD).lockAcquireInterval(Duration.ofMillis(50))
                .monitoringInterval(Duration.ofMillis(500)).probeTimeout(Duration.ofMillis(200));
        // its progression row is Node:All, a name a heartbeat clean-up must never take for a node's
        options.projections().add(new EventProjection("Node") {
            @Override
            public void apply(EventEnvelope event, DocumentOperations operations) {
            }
        }, Lifecycle.ASYNC);
        DocumentStore store = open(options);
        appendTicks(store, "n", 1);
        store.waitForNonStaleProjectionData(WAIT);
        long now = System.currentTimeMillis();
        String prefix = DaemonSql.HEARTBEAT_ROW_PREFIX;
        db.execute("INSERT INTO " + db.table("pc_event_progression") + " (name, last_seq_id, last_updated)"
                + " VALUES ('" + prefix + "killed-long-ago', " + (now - Duration.ofDays(1).toMillis())
                + ", CURRENT_TIMESTAMP)");
        db.execute("INSERT INTO " + db.table("pc_event_progression") + " (name, last_seq_id, last_updated)"
                + " VALUES ('" + prefix + "alive-elsewhere', " + (now + Duration.ofMinutes(10).toMillis())
                + ", CURRENT_TIMESTAMP)");
        await().atMost(WAIT).until(() -> db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_event_progression")
                + " WHERE name = '" + prefix + "killed-long-ago'") == 0);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_event_progression")
                + " WHERE name LIKE '" + prefix + "%'")).isEqualTo(2);
        assertThat(db.queryLong("SELECT last_seq_id FROM " + db.table("pc_event_progression")
                + " WHERE name = 'Node:All'")).isEqualTo(1);
    }
}
