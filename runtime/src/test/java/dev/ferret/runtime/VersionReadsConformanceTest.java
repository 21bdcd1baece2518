package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.daemon.DaemonFixtures;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.MonotonicReader;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A deploy of a new projection version never serves an empty or older read model: while the new version replays into
 * its own table, query sessions read the prior version's, and they switch, for good, once it caught up. A reader
 * querying in a loop all along never sees fewer documents, or an older state, than it saw before.
 */
@Tag("conformance")
class VersionReadsConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<String> STREAMS = List.of("a", "b", "c");

    /** Version 1 counts ticks; version 2 counts them in hundreds. */
    public record Count(String id, long value) {
    }

    /** Holds version 2's first event until opened. */
    private static volatile CountDownLatch gate = new CountDownLatch(0);

    private static Snapshot<Count> version(int version) {
        long step = version == 1 ? 1 : 100;
        Snapshot<Count> snapshot = Snapshot.of("Count", Count.class)
                .create(Tick.class, (id, e) -> {
                    if (version > 1) {
                        awaitGate();
                    }
                    return new Count(id, step);
                })
                .apply(Tick.class, (doc, e) -> new Count(doc.id(), doc.value() + step));
        return version == 1 ? snapshot : snapshot.withVersion(version);
    }

    private static void awaitGate() {
        try {
            if (!gate.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static StoreOptions options(TestDatabase db, boolean partitioned, int version) {
        StoreOptions options = DaemonFixtures.fastDaemon(db);
        options.events().partitionByTenant(partitioned);
        options.projections().add(version(version), Lifecycle.ASYNC);
        return options;
    }

    private static QuerySession query(DocumentStore store, boolean partitioned) {
        return partitioned ? store.querySession("acme") : store.querySession();
    }

    private static Map<String, Long> read(DocumentStore store, boolean partitioned) {
        Map<String, Long> values = new HashMap<>();
        try (QuerySession query = query(store, partitioned)) {
            query.query(Count.class).toList().forEach(count -> values.put(count.id(), count.value()));
        }
        return values;
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void queriesReadThePriorVersionUntilTheNewOneCaughtUpThenSwitchForGood(boolean partitioned) throws Exception {
        try (TestDatabase db = TestDatabase.create("versionreads" + partitioned)) {
            try (DocumentStore first = Ferret.createStore(options(db, partitioned, 1))) {
                try (DocumentSession session = partitioned ? first.openSession("acme") : first.openSession()) {
                    for (String stream : STREAMS) {
                        for (int i = 1; i <= 5; i++) {
                            session.events().append(stream, new Tick(i));
                        }
                    }
                    session.saveChanges();
                }
                first.waitForNonStaleProjectionData(WAIT);
                assertThat(read(first, partitioned)).containsOnlyKeys(STREAMS).containsValues(5L);
            }

            // the next deploy: version 2, held on its first event while a reader queries in a loop
            gate = new CountDownLatch(1);
            try (DocumentStore second = Ferret.createStore(options(db, partitioned, 2))) {
                String tenant = partitioned ? "acme" : StoreOptions.DEFAULT_TENANT;
                MonotonicReader reader = new MonotonicReader("version-reader", () -> read(second, partitioned));
                try (reader) {
                    readWhileTheNewVersionCatchesUp(second, partitioned, tenant, reader);
                }
                assertThat(reader.violation()).as("what the reader saw").isNull();
                assertThat(reader.seen()).as("the reader read both versions").anySatisfy(values ->
                        assertThat(values).containsValues(5L)).anySatisfy(values ->
                        assertThat(values).containsValues(500L));
            }
        }
    }

    /** Version 2 is held on its first event, then let go; the reader reads all along. */
    private static void readWhileTheNewVersionCatchesUp(DocumentStore second, boolean partitioned, String tenant,
                                                        MonotonicReader reader) {
        try {
            await().atMost(WAIT).until(() -> reader.reads() >= 5);
            assertThat(second.readVersion(Count.class, tenant))
                    .as("version 2 is held on its first event").isEqualTo(1);
            assertThat(read(second, partitioned)).as("the prior version's documents, not an empty table")
                    .containsOnlyKeys(STREAMS).containsValues(5L);
            assertThat(second.daemon().shard(newShard(partitioned)).orElseThrow().servesReads())
                    .as("the status says version 2 does not serve reads yet").isFalse();
        } finally {
            gate.countDown();
        }
        second.waitForNonStaleProjectionData(WAIT);
        await().atMost(WAIT).until(() -> second.readVersion(Count.class, tenant) == 2);
        assertThat(second.daemon().shard(newShard(partitioned)).orElseThrow().servesReads()).isTrue();
        assertThat(read(second, partitioned)).containsOnlyKeys(STREAMS).containsValues(500L);
        await().atMost(WAIT).until(() -> reader.lastSeen().containsValue(500L));
    }

    private static String newShard(boolean partitioned) {
        return partitioned ? "Count:V2:All@acme" : "Count:V2:All";
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void theNewVersionServesReadsOnceCaughtUpWithoutWaitingForAReader(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("versionstatus" + partitioned)) {
            try (DocumentStore first = Ferret.createStore(options(db, partitioned, 1))) {
                try (DocumentSession session = partitioned ? first.openSession("acme") : first.openSession()) {
                    session.events().append("a", new Tick(1));
                    session.saveChanges();
                }
                first.waitForNonStaleProjectionData(WAIT);
            }
            gate = new CountDownLatch(0);
            try (DocumentStore second = Ferret.createStore(options(db, partitioned, 2))) {
                second.waitForNonStaleProjectionData(WAIT);
                // no query session has read the type: the daemon switched reads when the shard caught up
                await().atMost(WAIT).until(() -> second.daemon().shard(newShard(partitioned))
                        .map(ShardStatus::servesReads).orElse(false));
                assertThat(second.readVersion(Count.class, partitioned ? "acme" : StoreOptions.DEFAULT_TENANT))
                        .isEqualTo(2);
            }
        }
    }

    @ParameterizedTest(name = "partitioned by tenant: {0}")
    @ValueSource(booleans = {false, true})
    void aProjectionWithoutAPriorVersionServesItsOwnTableAtOnce(boolean partitioned) {
        try (TestDatabase db = TestDatabase.create("versionreadsnew" + partitioned)) {
            StoreOptions options = options(db, partitioned, 2);
            options.daemon().mode(DaemonMode.DISABLED);
            try (DocumentStore store = Ferret.createStore(options)) {
                String tenant = partitioned ? "acme" : StoreOptions.DEFAULT_TENANT;
                assertThat(store.readVersion(Count.class, tenant))
                        .as("neither version has a progression: nothing to serve from the prior one").isEqualTo(2);
            }
        }
    }
}
