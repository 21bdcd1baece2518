package dev.ferret.runtime.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code ferret.replica.reads} as an exporter sees it: one series per database and route, counting reads. */
class ReplicaReadMetricsTest {

    @Test
    void readsAreCountedPerDatabaseAndRoute() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build()) {
            OpenTelemetryMetrics metrics = new OpenTelemetryMetrics(sdk);
            metrics.replicaRead("default", ReadRoute.REPLICA);
            metrics.replicaRead("default", ReadRoute.REPLICA);
            metrics.replicaRead("default", ReadRoute.PRIMARY_UNPROVABLE);
            metrics.replicaRead("eu", ReadRoute.REPLICA_CAUGHT_UP);

            MetricData reads = reader.collectAllMetrics().stream()
                    .filter(m -> m.getName().equals("ferret.replica.reads")).findFirst().orElseThrow();
            Map<Attributes, Long> points = new HashMap<>();
            for (LongPointData point : reads.getLongSumData().getPoints()) {
                points.put(point.getAttributes(), point.getValue());
            }
            assertThat(reads.getUnit()).isEqualTo("{read}");
            assertThat(points).containsOnly(
                    Map.entry(route("default", "replica"), 2L),
                    Map.entry(route("default", "primary_unprovable"), 1L),
                    Map.entry(route("eu", "replica_caught_up"), 1L));
        }
    }

    private static Attributes route(String database, String route) {
        return Attributes.of(AttributeKey.stringKey(OpenTelemetryMetrics.DATABASE_ATTRIBUTE), database,
                AttributeKey.stringKey(OpenTelemetryMetrics.ROUTE_ATTRIBUTE), route);
    }
}
