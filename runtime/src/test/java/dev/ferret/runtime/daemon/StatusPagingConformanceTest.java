package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.ShardPage;
import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.daemon.StatusSummary;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Status at many shards: one shard by name, filtered and paged listings ordered by name with the count and summary
 * of all they matched, and the summary per database, on a store whose tenants live in two databases.
 */
@Tag("conformance")
class StatusPagingConformanceTest {

    public record Counted(String id, int n) {
    }

    private static final List<String> LOCAL = List.of("a1", "a2", "a3");
    private static final List<String> FAR = List.of("f1", "f2");

    @Test
    void shardsAreFoundByNameFilteredPagedAndCountedPerDatabase() throws Exception {
        try (TestDatabase db = TestDatabase.create("paging");
             TestDatabase far = db.sibling("far")) {
            StoreOptions options = TenantPartitionConformanceTest.partitioned(db);
            options.projections().add(Snapshot.of("Counted", Counted.class)
                    .create(Tick.class, (id, e) -> new Counted(id, 1))
                    .apply(Tick.class, (doc, e) -> new Counted(doc.id(), doc.n() + 1)), Lifecycle.ASYNC);
            options.tenancy().database("far", far.dataSource(), FAR.toArray(String[]::new));
            try (DocumentStore store = Ferret.createStore(options)) {
                for (String tenant : List.of("a1", "a2", "a3", "f1", "f2")) {
                    TenantPartitionConformanceTest.appendTicks(store, tenant, "s", 2);
                }
                store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
                ProjectionDaemon daemon = store.daemon();

                ShardStatus f1 = daemon.shard("Tally:All@f1").orElseThrow();
                assertThat(f1.database()).isEqualTo("far");
                assertThat(f1.tenantId()).isEqualTo("f1");
                assertThat(f1.projection()).isEqualTo("Tally");
                assertThat(f1.progression()).isEqualTo(2);
                assertThat(daemon.shard("Counted:All@a2").orElseThrow().database())
                        .isEqualTo(StoreOptions.DEFAULT_DATABASE);
                assertThat(daemon.shard("Tally:All@nobody")).isEmpty();

                ShardPage all = daemon.shards(ShardQuery.all());
                assertThat(all.matched()).isEqualTo(10);
                assertThat(all.hasMore()).isFalse();
                List<String> names = all.shards().stream().map(ShardStatus::name).toList();
                assertThat(names).isSorted().hasSize(10);

                ShardPage farOnly = daemon.shards(ShardQuery.all().database("far"));
                assertThat(farOnly.matched()).isEqualTo(4);
                assertThat(farOnly.shards()).allSatisfy(s -> assertThat(s.database()).isEqualTo("far"));
                assertThat(farOnly.summary().databases()).singleElement()
                        .satisfies(d -> assertThat(d.database()).isEqualTo("far"))
                        .satisfies(d -> assertThat(d.shards()).isEqualTo(4));

                ShardPage one = daemon.shards(ShardQuery.all().projection("Counted").tenant("a2"));
                assertThat(one.shards()).extracting(ShardStatus::name).containsExactly("Counted:All@a2");
                assertThat(daemon.shards(ShardQuery.all().states(ShardState.RUNNING)).matched()).isEqualTo(10);
                assertThat(daemon.shards(ShardQuery.all().states(ShardState.PAUSED, ShardState.HELD)).matched())
                        .isZero();

                ShardPage middle = daemon.shards(ShardQuery.all().page(3, 4));
                assertThat(middle.shards()).extracting(ShardStatus::name).containsExactlyElementsOf(names.subList(3, 7));
                assertThat(middle.matched()).isEqualTo(10);
                assertThat(middle.hasMore()).isTrue();
                ShardPage last = daemon.shards(ShardQuery.all().page(8, 4));
                assertThat(last.shards()).extracting(ShardStatus::name).containsExactlyElementsOf(names.subList(8, 10));
                assertThat(last.hasMore()).isFalse();

                StatusSummary summary = daemon.summary();
                assertThat(summary.shards()).isEqualTo(10);
                assertThat(summary.byState()).containsEntry(ShardState.RUNNING, 10);
                assertThat(summary.databases()).extracting(StatusSummary.DatabaseSummary::database)
                        .containsExactlyInAnyOrder(StoreOptions.DEFAULT_DATABASE, "far");
                assertThat(summary.databases()).extracting(StatusSummary.DatabaseSummary::shards)
                        .containsExactlyInAnyOrder(6, 4);
                assertThat(summary.projections()).extracting(StatusSummary.ProjectionSummary::shards)
                        .containsExactlyInAnyOrder(5, 5);
                assertThat(store.daemon().status().summary().shards()).isEqualTo(10);
            }
        }
    }

    @Test
    void aQueryOutsideItsBoundsNamesWhatWasWrong() {
        assertThatThrownBy(() -> ShardQuery.all().page(0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit").hasMessageContaining("was 0");
        assertThatThrownBy(() -> ShardQuery.all().page(0, ShardQuery.MOST + 1))
                .hasMessageContaining("was " + (ShardQuery.MOST + 1));
        assertThatThrownBy(() -> ShardQuery.all().page(-1, 10)).hasMessageContaining("offset")
                .hasMessageContaining("was -1");
    }
}
