package dev.ferret.runtime.daemon;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardPage;
import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.daemon.StatusSummary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The daemon's status as one snapshot: every shard (and whether it runs on this node), the mark, the liveness
 * problems; the lighter one the gauges read at each collection; and what stays cheap at tens of thousands of shards:
 * one shard by name, a filtered page, the summary. Reads only what its collaborators publish for
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
    private final ShardGroups groups;

    StatusSnapshots(DaemonSettings settings, ShardRegistry registry, ShardOwnership ownership,
                    MarkDetection detection, RearmingLoop polling, ShardParts parts) {
        this.settings = settings;
        this.registry = registry;
        this.ownership = ownership;
        this.detection = detection;
        this.polling = polling;
        this.outboxes = parts.outboxes();
        this.groups = parts.groups();
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

    /** One shard's full status, found by name in constant time. */
    Optional<ShardStatus> shard(String name) {
        ShardAgent agent = registry.get(name);
        return agent == null ? Optional.empty() : Optional.of(agent.status(runsHere(agent)));
    }

    /**
     * The page {@code query} asks for: every shard is matched and counted from its place and state alone, and only
     * the page's shards build a full status, so a page costs the same at 50 shards and at 50,000 but for the pass.
     */
    ShardPage page(ShardQuery query) {
        StatusSummary.Counter counter = new StatusSummary.Counter();
        List<ShardStatus> page = new ArrayList<>(Math.min(query.limit(), registry.size()));
        int matched = 0;
        for (ShardAgent agent : registry.byName()) {
            LogPartition partition = agent.partition();
            String database = partition.database().name();
            String projection = agent.applier().name();
            if (!query.matchesPlace(projection, partition.tenantId(), database)) {
                continue;
            }
            ShardState state = agent.state();
            if (!query.states().isEmpty() && !query.states().contains(state)) {
                continue;
            }
            if (matched >= query.offset() && page.size() < query.limit()) {
                page.add(agent.status(runsHere(agent)));
            }
            matched++;
            counter.add(agent.name(), projection, database, state, agent.lag());
        }
        return new ShardPage(page, matched, query, counter.summary());
    }

    /** Every shard counted, without building any shard's status. */
    StatusSummary summary() {
        return groups.summary();
    }

    private boolean runsHere(ShardAgent agent) {
        return ownership == null || ownership.runningHere().contains(agent.name());
    }

    private List<ShardStatus> shards() {
        Set<String> here = ownership == null ? null : ownership.runningHere();
        List<ShardStatus> statuses = new ArrayList<>(registry.size());
        registry.all().forEach(agent -> statuses.add(agent.status(here == null || here.contains(agent.name()))));
        return statuses;
    }
}
