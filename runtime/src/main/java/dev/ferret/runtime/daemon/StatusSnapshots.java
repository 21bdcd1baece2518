package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The daemon's status as one snapshot: every shard (and whether it runs on this node), the mark, the liveness
 * problems; and the lighter one the gauges read at each collection. Reads only what its collaborators publish for
 * other threads; called from any thread.
 */
final class StatusSnapshots {

    private final DaemonSettings settings;
    private final ShardRegistry registry;
    /** Null unless HotCold. */
    private final ShardOwnership ownership;
    private final MarkDetection detection;
    private final RearmingLoop polling;
    private final Outboxes outboxes;

    StatusSnapshots(DaemonSettings settings, ShardRegistry registry, ShardOwnership ownership,
                    MarkDetection detection, RearmingLoop polling, Outboxes outboxes) {
        this.settings = settings;
        this.registry = registry;
        this.ownership = ownership;
        this.detection = detection;
        this.polling = polling;
        this.outboxes = outboxes;
    }

    /** Everything, liveness problems included; {@code running} is the daemon's state as the caller read it. */
    DaemonStatus full(boolean running) {
        List<ShardStatus> statuses = shards();
        List<String> problems = running ? LivenessProblems.of(settings, polling, ownership, statuses) : List.of();
        return new DaemonStatus(settings.getMode(), running, detection.markStatus(), statuses,
                running ? polling.sinceLastRun() : Duration.ZERO, problems, outboxes.sweptStatus());
    }

    /** What the gauges read: no liveness reasons, no database work. */
    DaemonStatus observed(boolean running) {
        return new DaemonStatus(settings.getMode(), running, detection.markStatus(), shards());
    }

    private List<ShardStatus> shards() {
        Set<String> here = ownership == null ? null : ownership.runningHere();
        List<ShardStatus> statuses = new ArrayList<>(registry.size());
        registry.all().forEach(agent -> statuses.add(agent.status(here == null || here.contains(agent.name()))));
        return statuses;
    }
}
