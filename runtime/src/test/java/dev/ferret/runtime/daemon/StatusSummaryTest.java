package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.daemon.StatusSummary;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The status summary over many shards; runs without a database. */
class StatusSummaryTest {

    private static ShardStatus shard(String projection, String tenant, ShardState state, long progression,
                                     long mark) {
        return new ShardStatus(projection + ":" + tenant, state, progression, mark, null, null, Duration.ZERO, null,
                projection, tenant, true);
    }

    @Test
    void countsStatesAndFindsEachProjectionsWorstLagInOnePass() {
        List<ShardStatus> shards = List.of(
                shard("Orders", "t1", ShardState.RUNNING, 90, 100),
                shard("Orders", "t2", ShardState.PAUSED, 40, 100),
                shard("Orders", "t3", ShardState.RUNNING, 100, 100),
                shard("Dashboard", "t1", ShardState.RUNNING, 100, 100));
        DaemonStatus status = new DaemonStatus(DaemonMode.SOLO, true, new HighWaterMarkStatus(100, 100, true, null, Duration.ZERO, List.of()), shards);

        StatusSummary summary = status.summary();
        assertThat(summary.shards()).isEqualTo(4);
        assertThat(summary.byState()).containsExactly(Map.entry(ShardState.RUNNING, 3),
                Map.entry(ShardState.PAUSED, 1));
        assertThat(summary.projections()).hasSize(2);
        // ordered by name
        assertThat(summary.projections()).extracting(StatusSummary.ProjectionSummary::projection)
                .containsExactly("Dashboard", "Orders");
        StatusSummary.ProjectionSummary orders = summary.projections().get(1);
        assertThat(orders.projection()).isEqualTo("Orders");
        assertThat(orders.shards()).isEqualTo(3);
        assertThat(orders.worstLag()).isEqualTo(60);
        assertThat(orders.worstShard()).isEqualTo("Orders:t2");
        assertThat(orders.byState()).containsEntry(ShardState.PAUSED, 1).containsEntry(ShardState.RUNNING, 2);
        assertThat(summary.projections().get(0).worstLag()).isZero();
        assertThat(summary.databases()).singleElement().satisfies(database -> {
            assertThat(database.database()).isEqualTo("default");
            assertThat(database.shards()).isEqualTo(4);
            assertThat(database.worstShard()).isEqualTo("Orders:t2");
        });
    }

    @Test
    void noShardsIsAnEmptySummary() {
        StatusSummary summary = StatusSummary.of(List.of());
        assertThat(summary.shards()).isZero();
        assertThat(summary.byState()).isEmpty();
        assertThat(summary.projections()).isEmpty();
        assertThat(summary.databases()).isEmpty();
    }
}
