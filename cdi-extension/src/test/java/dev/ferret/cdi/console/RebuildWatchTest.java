package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RebuildWatchTest {

    private static final long SECOND = 1_000_000_000L;

    private static ShardStatus shard(String name, ShardState state, long progression, long mark) {
        return new ShardStatus(name, state, progression, mark, null);
    }

    @Test
    void aRebuildRunsUntilEveryShardReachedTheMarkItStartedWith() {
        RebuildWatch watch = new RebuildWatch();
        watch.started("Orders", List.of(shard("Orders@a", ShardState.REBUILDING, 0, 300),
                shard("Orders@b", ShardState.REBUILDING, 0, 100)), 0, "alice");

        RebuildWatch.Progress half = watch.progress(Map.of(
                "Orders@a", shard("Orders@a", ShardState.REBUILDING, 150, 310),
                "Orders@b", shard("Orders@b", ShardState.REBUILDING, 50, 100)), 2 * SECOND).get(0);
        assertThat(half).isEqualTo(new RebuildWatch.Progress("Orders", "alice", "running", 200, 400, 100, 2));

        RebuildWatch.Progress done = watch.progress(Map.of(
                "Orders@a", shard("Orders@a", ShardState.RUNNING, 320, 320),
                "Orders@b", shard("Orders@b", ShardState.RUNNING, 100, 100)), 4 * SECOND).get(0);
        assertThat(done.state()).isEqualTo("done");
        assertThat(done.done()).isEqualTo(400);
        assertThat(done.secondsLeft()).isZero();
    }

    @Test
    void aShardPausedOnAnErrorShowsTheRebuildPausedAndOnlyTheLastTwentyAreKept() {
        RebuildWatch watch = new RebuildWatch();
        for (int i = 0; i < 25; i++) {
            watch.started("P" + i, List.of(shard("P" + i + ":All", ShardState.REBUILDING, 0, 10)), 0, "bob");
        }
        List<RebuildWatch.Progress> all = watch.progress(Map.of("P24:All", shard("P24:All", ShardState.PAUSED, 3,
                10)), SECOND);
        assertThat(all).hasSize(RebuildWatch.KEPT);
        assertThat(all.get(0).label()).isEqualTo("P24");
        assertThat(all.get(0).state()).isEqualTo("paused");
        assertThat(all.get(0).secondsLeft()).isEqualTo(2);
    }
}
