package dev.ferret.runtime.metrics;

import dev.ferret.EventEnvelope;
import dev.ferret.daemon.DaemonStatus;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The daemon's metrics on the OpenTelemetry API, under the meter {@value #METER}. Every shard metric carries the
 * attribute {@value #SHARD_ATTRIBUTE}. Names (a Prometheus exporter turns the dots into underscores and adds
 * {@code _total} to counters and {@code _seconds} to durations):
 * <ul>
 *     <li>gauges: {@code ferret.shard.progression}, {@code ferret.shard.lag}, {@code ferret.high_water_mark};</li>
 *     <li>counters: {@code ferret.shard.events_applied}, {@code ferret.shard.pages_committed},
 *     {@code ferret.shard.retries}, {@code ferret.shard.dead_letters},
 *     {@code ferret.high_water_mark.skipped_sequences};</li>
 *     <li>histograms, in seconds: {@code ferret.shard.page.duration}, {@code ferret.shard.append_to_visible}.</li>
 * </ul>
 * Thread-safe: the instruments are; the attribute cache is a concurrent map.
 */
public final class OpenTelemetryMetrics implements DaemonMetrics {

    public static final String METER = "dev.ferret";
    public static final String SHARD_ATTRIBUTE = "ferret.shard";

    private static final AttributeKey<String> SHARD = AttributeKey.stringKey(SHARD_ATTRIBUTE);
    private static final double NANOS_PER_SECOND = 1e9;

    private final Meter meter;
    private final LongCounter eventsApplied;
    private final LongCounter pagesCommitted;
    private final LongCounter retries;
    private final LongCounter deadLetters;
    private final DoubleHistogram pageDuration;
    private final DoubleHistogram appendToVisible;
    private final Map<String, Attributes> shardAttributes = new ConcurrentHashMap<>();

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
    }

    static DaemonMetrics global() {
        return new OpenTelemetryMetrics(GlobalOpenTelemetry.get());
    }

    private Attributes shard(String name) {
        return shardAttributes.computeIfAbsent(name, n -> Attributes.of(SHARD, n));
    }

    @Override
    public void pageCommitted(String shard, List<EventEnvelope> events, Duration duration, OffsetDateTime visibleAt,
                              boolean replaying) {
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
    public void retried(String shard) {
        retries.add(1, shard(shard));
    }

    @Override
    public void deadLettered(String shard, int count) {
        deadLetters.add(count, shard(shard));
    }

    /** One callback observes all four from one reading of the status, so their values agree with one another. */
    @Override
    public AutoCloseable observe(Supplier<DaemonStatus> status) {
        ObservableLongMeasurement progression = meter.gaugeBuilder("ferret.shard.progression").ofLongs()
                .setUnit("{event}").setDescription("The last sequence a shard committed").buildObserver();
        ObservableLongMeasurement lag = meter.gaugeBuilder("ferret.shard.lag").ofLongs().setUnit("{event}")
                .setDescription("How far a shard is behind its high water mark").buildObserver();
        ObservableLongMeasurement mark = meter.gaugeBuilder("ferret.high_water_mark").ofLongs().setUnit("{event}")
                .setDescription("The sequence below which every event is committed or skipped").buildObserver();
        ObservableLongMeasurement skipped = meter.counterBuilder("ferret.high_water_mark.skipped_sequences")
                .setUnit("{event}").setDescription("Sequence numbers the high water mark moved past as holes")
                .buildObserver();
        BatchCallback callback = meter.batchCallback(() -> {
            DaemonStatus now = status.get();
            for (ShardStatus shard : now.shards()) {
                Attributes attributes = shard(shard.name());
                progression.record(shard.progression(), attributes);
                lag.record(shard.lag(), attributes);
            }
            mark.record(now.highWaterMark().mark());
            skipped.record(now.highWaterMark().totalSkippedSequences());
        }, progression, lag, mark, skipped);
        return callback::close;
    }
}
