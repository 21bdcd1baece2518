package dev.ferret.bench;

import dev.ferret.EventEnvelope;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.metrics.OpenTelemetryMetrics;
import dev.ferret.runtime.metrics.ShardLabel;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the daemon's metrics add to each committed page: {@link DaemonMetrics#pageCommitted} for a page of
 * {@code events} events, with no metrics against an OpenTelemetry SDK (counters, the page-duration histogram and one
 * append-to-visible record per event, collected in memory). The page's own work (a database round trip and a
 * commit) is not part of it. Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pmetrics verify}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MetricsBenchmark {

    private static final ShardLabel LABEL = new ShardLabel(null, "Tally", "default");

    @Param({"none", "sdk"})
    public String metrics;

    @Param({"1", "500"})
    public int events;

    private OpenTelemetrySdk sdk;
    private DaemonMetrics target;
    private List<EventEnvelope> page;
    private final OffsetDateTime visibleAt = OffsetDateTime.of(2026, 12, 3, 12, 0, 1, 0, ZoneOffset.UTC);
    private final Duration duration = Duration.ofMillis(12);

    @Setup(Level.Trial)
    public void setUp() {
        if (metrics.equals("sdk")) {
            sdk = OpenTelemetrySdk.builder().setMeterProvider(SdkMeterProvider.builder()
                    .registerMetricReader(InMemoryMetricReader.create()).build()).build();
            target = new OpenTelemetryMetrics(sdk);
        } else {
            target = DaemonMetrics.NONE;
        }
        page = new ArrayList<>(events);
        for (int i = 0; i < events; i++) {
            page.add(new EventEnvelope(i + 1, UUID.randomUUID(), "stream-" + i % 10, i / 10 + 1, "Tick",
                    visibleAt.minusNanos(1_000_000L * (i % 50)), "*DEFAULT*", new Tick(i)));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (sdk != null) {
            sdk.close();
        }
    }

    @Benchmark
    public void pageCommitted() {
        target.pageCommitted(LABEL, page, duration, visibleAt, false);
    }
}
