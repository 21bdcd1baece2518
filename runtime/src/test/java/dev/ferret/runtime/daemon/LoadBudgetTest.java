package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag("conformance")
class LoadBudgetTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void anUnboundedBudgetIsInert() throws Exception {
        LoadBudget budget = new LoadBudget(0, 0.9);
        assertThat(budget.isBounded()).isFalse();
        LoadBudget.Reservation room = budget.reserve(1_000_000, () -> false);
        budget.trim(room, 1);
        budget.release(room);
        assertThat(budget.inFlight()).isZero();
    }

    @Test
    void roomIsReservedTrimmedAndReleased() throws Exception {
        LoadBudget budget = new LoadBudget(1_000, 0.9);
        LoadBudget.Reservation a = budget.reserve(500, () -> false);
        LoadBudget.Reservation b = budget.reserve(500, () -> false);
        assertThat(budget.inFlight()).isEqualTo(1_000);
        budget.trim(a, 120);
        assertThat(budget.inFlight()).isEqualTo(620);
        budget.release(a);
        budget.release(b);
        assertThat(budget.inFlight()).isZero();
    }

    @Test
    void waitersAreLetInFirstComeFirstServed() throws Exception {
        LoadBudget budget = new LoadBudget(100, 0.9);
        LoadBudget.Reservation holder = budget.reserve(100, () -> false);
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> first = waiter(budget, "first", order);
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        CompletableFuture<Void> second = waiter(budget, "second", order);
        await().atMost(WAIT).until(() -> budget.waiting() == 2);
        CompletableFuture<Void> third = waiter(budget, "third", order);
        await().atMost(WAIT).until(() -> budget.waiting() == 3);
        budget.release(holder);
        CompletableFuture.allOf(first, second, third).get(30, TimeUnit.SECONDS);
        assertThat(order).containsExactly("first", "second", "third");
    }

    private static CompletableFuture<Void> waiter(LoadBudget budget, String name, List<String> order) {
        return CompletableFuture.runAsync(() -> {
            try {
                LoadBudget.Reservation room = budget.reserve(100, () -> false);
                order.add(name);
                budget.release(room);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aPageBiggerThanTheBudgetIsAllowedWhenNothingIsInFlight() throws Exception {
        LoadBudget budget = new LoadBudget(1, 0.9);
        LoadBudget.Reservation room = budget.reserve(500, () -> false);
        assertThat(room).isNotNull();
        budget.release(room);
    }

    @Test
    void memoryPressureLetsNothingNewInUntilTheWorkInFlightDrains() throws Exception {
        // threshold 1.0 registers no JVM signal, so the pressure set by hand stays until released
        LoadBudget budget = new LoadBudget(1_000, 1.0);
        LoadBudget.Reservation inFlight = budget.reserve(10, () -> false);
        budget.memoryPressure(true);
        CompletableFuture<LoadBudget.Reservation> next = CompletableFuture.supplyAsync(() -> {
            try {
                return budget.reserve(10, () -> false);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        assertThat(next).isNotDone();
        budget.release(inFlight); // nothing in flight: always allowed, pressure or not
        assertThat(next.get(30, TimeUnit.SECONDS)).isNotNull();
    }

    @Test
    void aWaiterGivesUpWhenItsShardStops() throws Exception {
        LoadBudget budget = new LoadBudget(10, 0.9);
        LoadBudget.Reservation holder = budget.reserve(10, () -> false);
        assertThat(budget.reserve(10, () -> true)).isNull();
        budget.release(holder);
    }

    @Test
    void manyShardsUnderABudgetOfOnePageAllFinishTheirFold() {
        try (TestDatabase db = TestDatabase.create("budget")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().tenantLoadBudget(1).maxConcurrentEventLoadsPerDatabase(1)
                    .maxConcurrentBatchWritesPerDatabase(1);
            for (int i = 0; i < 4; i++) {
                options.projections().add(Snapshot.of("Tally" + i, Tally.class)
                        .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                        .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n())),
                        Lifecycle.ASYNC);
            }
            try (DocumentStore store = Ferret.createStore(options)) {
                appendTicks(store, "b", 200);
                store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
                assertThat(store.daemon().status().shards()).hasSize(4)
                        .allSatisfy(shard -> assertThat(shard.lag()).isZero());
                assertThat(store.daemon().status().healthy()).isTrue();
            }
        }
    }
}
