package dev.ferret.cdi.console;

import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.ShardPage;
import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.daemon.StatusSummary;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import java.util.HashMap;
import java.util.Map;

/**
 * The console's {@code /api/status} body: the daemon's status as the page draws it, one page of its shards (filtered
 * by projection, tenant, database and state), each shown shard's rate from
 * {@link ShardRates}, the rebuilds {@link RebuildWatch} follows, and the HotCold nodes. Reads the daemon through its
 * public API only. Holds no state of its own; the two it reads are thread-safe.
 */
final class ConsoleStatus {

    private final ShardRates rates;
    private final RebuildWatch rebuilds;

    ConsoleStatus(ShardRates rates, RebuildWatch rebuilds) {
        this.rates = rates;
        this.rebuilds = rebuilds;
    }

    /**
     * The status of {@code daemon} now, with the page of shards {@code query} asks for (the summary counts every
     * shard, the page only its rows); {@code session} is the caller's (user, role, CSRF token).
     */
    JsonObjectBuilder render(ProjectionDaemon daemon, ShardQuery query, JsonObjectBuilder session) {
        DaemonStatus status = daemon.status();
        ShardPage page = daemon.shards(query);
        long now = System.nanoTime();
        Map<String, Long> deadLetters = daemon.deadLetterCounts();
        Map<String, ShardStatus> byName = new HashMap<>();
        status.shards().forEach(shard -> byName.put(shard.name(), shard));
        JsonArrayBuilder shards = Json.createArrayBuilder();
        for (ShardStatus shard : page.shards()) {
            shards.add(shard(shard, rates.sample(shard.name(), shard.progression(), now),
                    deadLetters.getOrDefault(shard.name(), 0L)));
        }
        // rates are kept for the shards someone looks at: the pages shown, not every shard of the store
        rates.retain(byName.keySet());
        JsonArrayBuilder rebuilding = Json.createArrayBuilder();
        for (RebuildWatch.Progress p : rebuilds.progress(byName, now)) {
            rebuilding.add(Json.createObjectBuilder().add("label", p.label()).add("startedBy", p.startedBy())
                    .add("state", p.state()).add("done", p.done()).add("total", p.total())
                    .add("eventsPerSecond", p.perSecond()).add("secondsLeft", p.secondsLeft()));
        }
        String self = daemon.nodeName();
        JsonArrayBuilder nodes = Json.createArrayBuilder();
        daemon.nodes().forEach((name, age) -> nodes.add(Json.createObjectBuilder().add("name", name)
                .add("heartbeatAgeMillis", age.toMillis()).add("self", name.equals(self))));
        JsonArrayBuilder problems = Json.createArrayBuilder();
        status.livenessProblems().forEach(problems::add);
        return Json.createObjectBuilder()
                .add("mode", status.mode().name())
                .add("running", status.running())
                .add("healthy", status.healthy())
                .add("live", status.live())
                .add("livenessProblems", problems)
                .add("node", self)
                .add("nodes", nodes)
                .add("highWaterMark", mark(status.highWaterMark()))
                .add("summary", summary(status.summary()))
                .add("page", Json.createObjectBuilder().add("matched", page.matched())
                        .add("offset", query.offset()).add("limit", query.limit()).add("hasMore", page.hasMore())
                        .add("summary", summary(page.summary())))
                .add("shards", shards)
                .add("rebuilds", rebuilding)
                .add("session", session);
    }

    private static JsonObjectBuilder shard(ShardStatus shard, ShardRates.Rate rate, long deadLetters) {
        JsonArrayBuilder history = Json.createArrayBuilder();
        rate.history().forEach(history::add);
        JsonObjectBuilder row = Json.createObjectBuilder()
                .add("name", shard.name())
                .add("projection", shard.projection())
                .add("state", shard.state().name())
                .add("runsHere", shard.runsHere())
                .add("servesReads", shard.servesReads())
                .add("progression", shard.progression())
                .add("highWaterMark", shard.highWaterMark())
                .add("lag", shard.lag())
                .add("database", shard.database())
                .add("eventsPerSecond", rate.perSecond())
                .add("rateHistory", history)
                .add("stalledForMillis", shard.stalledFor().toMillis())
                .add("deadLetters", deadLetters)
                .add("retrying", shard.state() == ShardState.RETRYING);
        if (shard.tenantId() != null) {
            row.add("tenant", shard.tenantId());
        }
        if (shard.sinceLastCommit() != null) {
            row.add("sinceLastCommitMillis", shard.sinceLastCommit().toMillis());
        }
        if (shard.error() != null) {
            row.add("errorType", shard.error().getClass().getName())
                    .add("error", String.valueOf(shard.error().getMessage()));
        }
        return row;
    }

    /** The counts first: states, and per projection its states and worst lag. */
    private static JsonObjectBuilder summary(StatusSummary summary) {
        JsonArrayBuilder projections = Json.createArrayBuilder();
        for (StatusSummary.ProjectionSummary p : summary.projections()) {
            JsonObjectBuilder line = Json.createObjectBuilder().add("projection", p.projection())
                    .add("shards", p.shards()).add("byState", states(p.byState())).add("worstLag", p.worstLag());
            if (p.worstShard() != null) {
                line.add("worstShard", p.worstShard());
            }
            projections.add(line);
        }
        JsonArrayBuilder databases = Json.createArrayBuilder();
        for (StatusSummary.DatabaseSummary d : summary.databases()) {
            JsonObjectBuilder line = Json.createObjectBuilder().add("database", d.database())
                    .add("shards", d.shards()).add("byState", states(d.byState())).add("worstLag", d.worstLag());
            if (d.worstShard() != null) {
                line.add("worstShard", d.worstShard());
            }
            databases.add(line);
        }
        return Json.createObjectBuilder().add("shards", summary.shards()).add("byState", states(summary.byState()))
                .add("projections", projections).add("databases", databases);
    }

    private static JsonObjectBuilder states(Map<ShardState, Integer> counts) {
        JsonObjectBuilder states = Json.createObjectBuilder();
        counts.forEach((state, count) -> states.add(state.name(), count));
        return states;
    }

    private static JsonObjectBuilder mark(HighWaterMarkStatus mark) {
        JsonArrayBuilder skips = Json.createArrayBuilder();
        for (GapSkip skip : mark.recentSkips()) {
            skips.add(Json.createObjectBuilder().add("from", skip.fromSequence()).add("to", skip.toSequence())
                    .add("reason", String.valueOf(skip.reason())).add("at", String.valueOf(skip.at())));
        }
        JsonObjectBuilder json = Json.createObjectBuilder()
                .add("mark", mark.mark())
                .add("highestSeen", mark.highestSeen())
                .add("healthy", mark.healthy())
                .add("stalledForMillis", mark.stalledFor() == null ? 0 : mark.stalledFor().toMillis())
                .add("totalSkips", mark.totalSkips())
                .add("totalSkippedSequences", mark.totalSkippedSequences())
                .add("recentSkips", skips);
        if (mark.error() != null) {
            json.add("error", String.valueOf(mark.error().getMessage()));
        }
        return json;
    }
}
