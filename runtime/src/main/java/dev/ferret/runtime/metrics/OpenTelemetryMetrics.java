package dev.ferret.runtime.metrics;

import dev.ferret.EventEnvelope;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.BatchCallback;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The daemon's metrics on the OpenTelemetry API, under the meter {@value #METER}. Every shard metric carries the
 * attributes {@value #PROJECTION_ATTRIBUTE} and {@value #DATABASE_ATTRIBUTE}, and {@value #SHARD_ATTRIBUTE} when the
 * store asks for metrics per shard (see {@link ShardLabel}); without it the gauges give each projection's and
 * database's worst lag and lowest progression. Names (a Prometheus exporter turns the dots into underscores and adds
 * {@code _total} to counters and {@code _seconds} to durations):
 * <ul>
 *     <li>gauges: {@code ferret.shard.progression}, {@code ferret.shard.lag}, {@code ferret.shards} (by
 *     {@value #STATE_ATTRIBUTE}), {@code ferret.high_water_mark};</li>
 *     <li>counters: {@code ferret.shard.events_applied}, {@code ferret.shard.pages_committed},
 *     {@code ferret.shard.retries}, {@code ferret.shard.dead_letters},
 *     {@code ferret.high_water_mark.skipped_sequences}, and {@code ferret.replica.reads} (by
 *     {@value #DATABASE_ATTRIBUTE} and {@value #ROUTE_ATTRIBUTE}, see {@link ReadRoute});</li>
 *     <li>histograms, in seconds: {@code ferret.shard.page.duration}, {@code ferret.shard.append_to_visible}.</li>
 * </ul>
 * Thread-safe: the instruments are; the attribute cache is a concurrent map.
 */
public final class OpenTelemetryMetrics implements DaemonMetrics {

    public static final String METER = "dev.ferret";
    public static final String SHARD_ATTRIBUTE = "ferret.shard";
    public static final String PROJECTION_ATTRIBUTE = "ferret.projection";
    public static final String DATABASE_ATTRIBUTE = "ferret.database";
    public static final String STATE_ATTRIBUTE = "ferret.shard.state";
    public static final String ROUTE_ATTRIBUTE = "ferret.read.route";

    private static final AttributeKey<String> SHARD = AttributeKey.stringKey(SHARD_ATTRIBUTE);
    private static final AttributeKey<String> PROJECTION = AttributeKey.stringKey(PROJECTION_ATTRIBUTE);
    private static final AttributeKey<String> DATABASE = AttributeKey.stringKey(DATABASE_ATTRIBUTE);
    private static final AttributeKey<String> STATE = AttributeKey.stringKey(STATE_ATTRIBUTE);
    private static final AttributeKey<String> ROUTE = AttributeKey.stringKey(ROUTE_ATTRIBUTE);
    private static final double NANOS_PER_SECOND = 1e9;

    private final Meter meter;
    private final LongCounter eventsApplied;
    private final LongCounter pagesCommitted;
    private final LongCounter retries;
    private final LongCounter deadLetters;
    private final DoubleHistogram pageDuration;
    private final DoubleHistogram appendToVisible;
    private final LongCounter replicaReads;
    private final Map<ShardLabel, Attributes> shardAttributes = new ConcurrentHashMap<>();
    /** By database, then route: a handful of entries, one per database with a replica. */
    private final Map<String, Map<ReadRoute, Attributes>> routeAttributes = new ConcurrentHashMap<>();

    public OpenTelemetryMetrics(OpenTelemetry openTelemetry) {
        meter = openTelemetry.getMeter(METER);
        eventsApplied = meter.counterBuilder("ferret.shard.events_applied").setUnit("{event}")
                .setDescription("Events a shard applied in pages that committed").build();
        pagesCommitted = meter.counterBuilder("ferret.shard.pages_committed").setUnit("{page}")
                .setDescription("Pages a shard committed").build();
        retries = meter.counterBuilder("ferret.shard.retries").setUnit("{retry}")
                .setDescription("Times a shard backed off from a transient failure").build();
        deadLetters = meter.counterBuilder("ferret.shard.dead_letters").setUnit("{event}")
                .setDescription("Events a shard set aside as dead letters").build();
        pageDuration = meter.histogramBuilder("ferret.shard.page.duration").setUnit("s")
                .setDescription("A page's time from its load to its commit").build();
        appendToVisible = meter.histogramBuilder("ferret.shard.append_to_visible").setUnit("s")
                .setDescription("An event's time from its append to the commit of the page that applied it").build();
        replicaReads = meter.counterBuilder("ferret.replica.reads").setUnit("{read}")
                .setDescription("Query session reads of a database with a read replica, by where they went").build();
    }

    static DaemonMetrics global() {
        return new OpenTelemetryMetrics(GlobalOpenTelemetry.get());
    }

    private Attributes shard(ShardLabel label) {
        return shardAttributes.computeIfAbsent(label, l -> l.shard() == null
                ? Attributes.of(PROJECTION, l.projection(), DATABASE, l.database())
                : Attributes.of(SHARD, l.shard(), PROJECTION, l.projection(), DATABASE, l.database()));
    }

    @Override
    public void pageCommitted(ShardLabel shard, List<EventEnvelope> events, Duration duration,
                              OffsetDateTime visibleAt, boolean replaying) {
        Attributes attributes = shard(shard);
        pagesCommitted.add(1, attributes);
        eventsApplied.add(events.size(), attributes);
        pageDuration.record(duration.toNanos() / NANOS_PER_SECOND, attributes);
        if (replaying) {
            return;
        }
        for (EventEnvelope event : events) {
            Duration latency = Duration.between(event.timestamp(), visibleAt);
            appendToVisible.record(Math.max(0, latency.toNanos()) / NANOS_PER_SECOND, attributes);
        }
    }

    @Override
    public void retried(ShardLabel shard) {
        retries.add(1, shard(shard));
    }

    @Override
    public void deadLettered(ShardLabel shard, int count) {
        deadLetters.add(count, shard(shard));
    }

    @Override
    public void replicaRead(String database, ReadRoute route) {
        replicaReads.add(1, routeAttributes.computeIfAbsent(database, OpenTelemetryMetrics::routes).get(route));
    }

    private static Map<ReadRoute, Attributes> routes(String database) {
        Map<ReadRoute, Attributes> byRoute = new EnumMap<>(ReadRoute.class);
        for (ReadRoute route : ReadRoute.values()) {
            byRoute.put(route, Attributes.of(DATABASE, database, ROUTE, route.attribute()));
        }
        return byRoute;
    }

    /** One callback observes them all from one reading of the status, so their values agree with one another. */
    @Override
    public AutoCloseable observe(Supplier<DaemonStatus> status, boolean perShard) {
        ObservableLongMeasurement progression = meter.gaugeBuilder("ferret.shard.progression").ofLongs()
                .setUnit("{event}").setDescription("The last sequence a shard committed (per projection: the lowest)")
                .buildObserver();
        ObservableLongMeasurement lag = meter.gaugeBuilder("ferret.shard.lag").ofLongs().setUnit("{event}")
                .setDescription("How far a shard is behind its high water mark (per projection: the worst)")
                .buildObserver();
        ObservableLongMeasurement shards = meter.gaugeBuilder("ferret.shards").ofLongs().setUnit("{shard}")
                .setDescription("How many shards are in each state").buildObserver();
        ObservableLongMeasurement mark = meter.gaugeBuilder("ferret.high_water_mark").ofLongs().setUnit("{event}")
                .setDescription("The sequence below which every event is committed or skipped").buildObserver();
        ObservableLongMeasurement skipped = meter.counterBuilder("ferret.high_water_mark.skipped_sequences")
                .setUnit("{event}").setDescription("Sequence numbers the high water mark moved past as holes")
                .buildObserver();
        BatchCallback callback = meter.batchCallback(() -> {
            DaemonStatus now = status.get();
            Map<ShardLabel, long[]> groups = new HashMap<>();
            Map<ShardLabel, Map<ShardState, Long>> states = new HashMap<>();
            for (ShardStatus shard : now.shards()) {
                ShardLabel group = ShardLabel.of(shard.name(), shard.projection(), shard.database(), false);
                states.computeIfAbsent(group, g -> new EnumMap<>(ShardState.class))
                        .merge(shard.state(), 1L, Long::sum);
                if (perShard) {
                    Attributes attributes = shard(ShardLabel.of(shard.name(), shard.projection(), shard.database(),
                            true));
                    progression.record(shard.progression(), attributes);
                    lag.record(shard.lag(), attributes);
                } else {
                    // {lowest progression, worst lag}
                    long[] g = groups.computeIfAbsent(group, x -> new long[] {Long.MAX_VALUE, 0});
                    g[0] = Math.min(g[0], shard.progression());
                    g[1] = Math.max(g[1], shard.lag());
                }
            }
            groups.forEach((group, g) -> {
                Attributes attributes = shard(group);
                progression.record(g[0], attributes);
                lag.record(g[1], attributes);
            });
            states.forEach((group, counts) -> counts.forEach((state, count) -> shards.record(count,
                    shard(group).toBuilder().put(STATE, state.name()).build())));
            mark.record(now.highWaterMark().mark());
            skipped.record(now.highWaterMark().totalSkippedSequences());
        }, progression, lag, shards, mark, skipped);
        return callback::close;
    }
}
