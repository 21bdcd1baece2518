package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * More tenants than workers, a few of them under sustained appends: every tenant with work takes a turn of one page
 * and goes to the back of the line, so a tenant with a trickle of events is projected while the busy ones are still
 * behind, and with a budget nobody waits beyond one turn per other tenant.
 */
@Tag("conformance")
class TenantFairnessConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int WORKERS = 4;
    private static final int BUSY = 8;
    private static final int TRICKLE = 40;

    private final TestResources resources = new TestResources();
    /** When each trickle tenant's first event was applied, in nanos; and when it was appended. */
    private final Map<String, Long> firstApplied = new ConcurrentHashMap<>();
    private final Map<String, Long> appendedAt = new ConcurrentHashMap<>();

    @AfterEach
    void closeAll() throws Exception {
        resources.close();
    }

    /**
     * Notes when a trickle tenant's first event is applied; a busy tenant's events cost a millisecond each, as real
     * projection work does, so that the busy backlog outlasts the trickle on any engine and machine.
     */
    public final class FirstSeen extends EventProjection {
        public FirstSeen() {
            super("FirstSeen");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (event.tenantId().startsWith("trickle")) {
                firstApplied.putIfAbsent(event.tenantId(), System.nanoTime());
                return;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("stopped in a busy tenant's page", e);
            }
        }
    }

    private static void append(DocumentStore store, String tenant, int count) {
        try (DocumentSession session = store.openSession(tenant)) {
            for (int i = 1; i <= count; i++) {
                session.events().append("s", new Tick(i));
            }
            session.saveChanges();
        }
    }

    private static List<String> tenants(String prefix, int n) {
        return IntStream.range(0, n).mapToObj(i -> prefix + i).toList();
    }

    private DocumentStore store(TestDatabase db, long budget) {
        StoreOptions options = fastDaemon(db);
        options.events().partitionByTenant(true);
        options.daemon().workerThreads(WORKERS).tenantLoadBudget(budget);
        options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.ASYNC).add(new FirstSeen(), Lifecycle.ASYNC);
        return resources.add(Ferret.createStore(options));
    }

    /** Appends to the busy tenants until stopped, so their shards always have another page. */
    private Thread sustained(DocumentStore store, List<String> busy, AtomicBoolean stop) {
        Thread appender = new Thread(() -> {
            int round = 0;
            while (!stop.get()) {
                append(store, busy.get(round++ % busy.size()), 50);
            }
        }, "sustained-appends");
        appender.start();
        return appender;
    }

    private static long tally(DocumentStore store, String tenant) {
        return store.querySession(tenant).load(Tally.class, "s").map(Tally::count).orElse(0L);
    }

    private void everyTrickleTenantMovesWhileTheBusyOnesAreStillBehind(DocumentStore store) throws Exception {
        List<String> busy = tenants("busy", BUSY);
        List<String> trickle = tenants("trickle", TRICKLE);
        for (String tenant : busy) {
            append(store, tenant, 2_000);
        }
        AtomicBoolean stop = new AtomicBoolean();
        Thread appender = sustained(store, busy, stop);
        try {
            for (String tenant : trickle) {
                appendedAt.put(tenant, System.nanoTime());
                append(store, tenant, 3);
            }
            await().atMost(WAIT).until(() -> trickle.stream().allMatch(t -> tally(store, t) == 3));
            // the busy tenants have not caught up: the trickle did not wait for them to run dry
            List<ShardStatus> busyShards = store.daemon().status().shards().stream()
                    .filter(s -> s.name().startsWith("Tally:All@busy")).toList();
            assertThat(busyShards).hasSize(BUSY);
            assertThat(busyShards.stream().mapToLong(ShardStatus::lag).sum()).isPositive();
        } finally {
            stop.set(true);
            appender.join(TimeUnit.SECONDS.toMillis(60));
        }
        long longest = trickle.stream().mapToLong(t -> firstApplied.get(t) - appendedAt.get(t)).max().orElseThrow();
        System.out.printf("fairness: %d tenants (%d busy), %d workers: longest trickle wait %d ms%n",
                BUSY + TRICKLE, BUSY, WORKERS, TimeUnit.NANOSECONDS.toMillis(longest));
    }

    @Test
    void withoutABudgetEveryTrickleTenantIsProjectedWhileBusyTenantsStillHaveBacklog() throws Exception {
        TestDatabase db = resources.database("fairfree");
        everyTrickleTenantMovesWhileTheBusyOnesAreStillBehind(store(db, 0));
    }

    @Test
    void withAOnePageBudgetNoShardWaitsBeyondOneTurnPerOtherShard() throws Exception {
        TestDatabase db = resources.database("fairbudget");
        DocumentStore store = store(db, 50); // one page of the fast daemon's 50 events
        everyTrickleTenantMovesWhileTheBusyOnesAreStillBehind(store);
        LoadBudget budget = ((AsyncDaemon) store.daemon()).budget();
        int shards = (BUSY + TRICKLE) * 2;
        System.out.printf("fairness with a one-page budget: %d shards, most turns waited %d%n", shards,
                budget.mostTurnsWaited());
        // FIFO: every other shard takes at most one turn ahead of a waiting one
        assertThat(budget.mostTurnsWaited()).isLessThanOrEqualTo(shards - 1);
        store.waitForNonStaleProjectionData(WAIT);
        assertThat(budget.inFlight()).isZero();
    }
}
