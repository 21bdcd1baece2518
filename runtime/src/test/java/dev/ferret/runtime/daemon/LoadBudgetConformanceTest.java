package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The budget inside a running daemon, on each engine; {@link LoadBudgetTest} covers the budget alone. */
@Tag("conformance")
class LoadBudgetConformanceTest {

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
