package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.ShardStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The reasons a daemon cannot heal by itself, which turn liveness DOWN: a detector that has not finished a cycle
 * within its bound, a HotCold lock session that cannot be replaced, a shard behind its mark that committed nothing
 * for longer than the stalled-shard threshold. Each names what and for how long; no database work.
 */
final class LivenessProblems {

    private LivenessProblems() {
    }

    /** What keeps the daemon from healing by itself, each naming what and how long. */
    static List<String> of(DaemonSettings settings, RearmingLoop polling, ShardOwnership ownership,
                           List<ShardStatus> statuses) {
        List<String> problems = new ArrayList<>();
        Duration heartbeat = polling.sinceLastRun();
        Duration bound = settings.detectorHeartbeatBound();
        if (heartbeat.compareTo(bound) > 0) {
            problems.add("the high water mark detector has not finished a cycle for " + heartbeat.toMillis()
                    + " ms (bound " + bound.toMillis() + " ms); " + polling.refusals() + " runs refused, "
                    + polling.rearms() + " re-armed");
        }
        if (ownership != null) {
            ownership.livenessProblem().ifPresent(problems::add);
        }
        Duration stalledBound = settings.getStalledShardThreshold();
        for (ShardStatus shard : statuses) {
            if (shard.stalledFor().compareTo(stalledBound) > 0) {
                problems.add("shard " + shard.name() + " is " + shard.lag() + " behind and has committed nothing for "
                        + shard.stalledFor().toMillis() + " ms (daemon.stalled-shard-threshold "
                        + stalledBound.toMillis() + " ms)");
            }
        }
        return problems;
    }
}
