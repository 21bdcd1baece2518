package dev.ferret.it;

import static dev.ferret.it.ItServer.war;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.ferret.it.app.ItResource;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The daemon's metrics through the server's MicroProfile Telemetry: the application turns the SDK on and points its
 * OTLP exporter at a receiver in this test's JVM, which keeps the last data point of every metric of the meter
 * {@code dev.ferret} it is sent; the test reads the names and values it scraped there. The deployment names a read
 * replica ({@code ferret.replica-datasource}: a second data source of the server's on the same database), so that
 * where query sessions read shows in {@code ferret.replica.reads}.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class MetricsIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    /** Metrics are per projection and database by default: the shard's projection is what they carry. */
    private static final String SHARD = "ItOrder";
    /** Data points that carried a shard's name: none, with the default settings. */
    private static final List<String> PER_SHARD_POINTS = new CopyOnWriteArrayList<>();
    private static final int ORDERS = 3;
    /**
     * The first export of data points ("name|projection" to value; a database other than the default follows the
     * projection after @) that shows the orders applied; null until then.
     */
    private static final AtomicReference<Map<String, Double>> SETTLED = new AtomicReference<>();
    /** The last export, for the failure message. */
    private static final AtomicReference<Map<String, Double>> LAST = new AtomicReference<>(Map.of());
    private static final List<String> RECEIVER_ERRORS = new CopyOnWriteArrayList<>();
    private static HttpServer receiver;

    @Deployment(testable = false)
    static WebArchive metrics() throws IOException {
        // up before the deployment: its exporter starts sending as soon as the application starts
        int port = Integer.parseInt(System.getProperty("it.otlp.port", "14318"));
        receiver = HttpServer.create(new InetSocketAddress("localhost", port), 16);
        receiver.setExecutor(Executors.newSingleThreadExecutor());
        receiver.createContext("/v1/metrics", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                // WildFly's exporter compresses its requests
                boolean gzip = "gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"));
                record(ExportMetricsServiceRequest.parseFrom(gzip ? new GZIPInputStream(body) : body));
            } catch (IOException | RuntimeException e) {
                RECEIVER_ERRORS.add(e.toString());
                exchange.sendResponseHeaders(400, -1);
                exchange.close();
                return;
            }
            byte[] answer = ExportMetricsServiceResponse.getDefaultInstance().toByteArray();
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        });
        receiver.start();
        return war("ferret-metrics", """
                ferret.schema=it_metrics
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=SOLO
                ferret.daemon.polling-interval=PT0.1S
                ferret.replica-datasource=%2$s
                otel.sdk.disabled=false
                otel.service.name=ferret-it
                otel.metrics.exporter=otlp
                otel.traces.exporter=none
                otel.logs.exporter=none
                otel.exporter.otlp.protocol=http/protobuf
                otel.exporter.otlp.metrics.protocol=http/protobuf
                otel.exporter.otlp.endpoint=http://localhost:%1$d
                otel.exporter.otlp.metrics.endpoint=http://localhost:%1$d/v1/metrics
                otel.metric.export.interval=500
                """.formatted(port, ItServer.required("it.replica.datasource")))
                .addPackage(ItResource.class.getPackage());
    }

    @AfterAll
    static void stopReceiver() {
        if (receiver != null) {
            receiver.stop(0);
        }
    }

    /**
     * Keeps the first export that shows the appended orders applied and the shard caught up, whole: the gauges of
     * one export are read in one collection, so its values agree with one another.
     */
    private static void record(ExportMetricsServiceRequest request) {
        Map<String, Double> export = new HashMap<>();
        for (ResourceMetrics resource : request.getResourceMetricsList()) {
            for (ScopeMetrics scope : resource.getScopeMetricsList()) {
                if (!scope.getScope().getName().equals("dev.ferret")) {
                    continue;
                }
                for (Metric metric : scope.getMetricsList()) {
                    List<NumberDataPoint> points = metric.hasSum() ? metric.getSum().getDataPointsList()
                            : metric.hasGauge() ? metric.getGauge().getDataPointsList() : List.of();
                    for (NumberDataPoint point : points) {
                        double value = point.hasAsInt() ? point.getAsInt() : point.getAsDouble();
                        export.put(metric.getName() + "|" + shard(point.getAttributesList()), value);
                    }
                    if (metric.hasHistogram()) {
                        metric.getHistogram().getDataPointsList().forEach(point -> export.put(metric.getName()
                                + ".count|" + shard(point.getAttributesList()), (double) point.getCount()));
                    }
                }
            }
        }
        LAST.set(export);
        // a page's instruments are recorded one after the other and an export may fall between them: settled is an
        // export that has the last one recorded (append-to-visible) for every order too
        if (export.getOrDefault("ferret.shard.events_applied|" + SHARD, 0.0) >= ORDERS
                && export.getOrDefault("ferret.shard.append_to_visible.count|" + SHARD, 0.0) >= ORDERS
                && export.getOrDefault("ferret.shard.lag|" + SHARD, -1.0) == 0
                && export.containsKey("ferret.replica.reads|replica")
                && export.containsKey("ferret.replica.reads|primary_unprovable")) {
            SETTLED.compareAndSet(null, export);
        }
    }

    /** The read route of a replica read's data point, else its projection (and database, if not the default). */
    private static String shard(List<KeyValue> attributes) {
        Optional<String> route = attributes.stream().filter(a -> a.getKey().equals("ferret.read.route"))
                .map(a -> a.getValue().getStringValue()).findFirst();
        if (route.isPresent()) {
            return route.get();
        }
        attributes.stream().filter(a -> a.getKey().equals("ferret.shard"))
                .forEach(a -> PER_SHARD_POINTS.add(a.getValue().getStringValue()));
        String database = attributes.stream().filter(a -> a.getKey().equals("ferret.database"))
                .map(a -> a.getValue().getStringValue()).findFirst().orElse("");
        String projection = attributes.stream().filter(a -> a.getKey().equals("ferret.projection"))
                .map(a -> a.getValue().getStringValue()).findFirst().orElse("");
        return projection.isEmpty() || database.equals("default") ? projection : projection + "@" + database;
    }

    @Test
    void theDaemonsMetricsReachTheExporterWithTheirNamesAndValues() throws Exception {
        for (int i = 0; i < ORDERS; i++) {
            assertThat(ItServer.post(ItServer.httpBase() + "/ferret-metrics/api/orders/m-" + i + "?customer=dora")
                    .statusCode()).isEqualTo(202);
        }
        // a plain read goes to the replica, here a second data source on the same database: read until the
        // projection has the first order, as an eventually consistent reader does
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        HttpResponse<String> fromReplica = ItServer.get(ItServer.httpBase() + "/ferret-metrics/api/orders/m-0");
        while (fromReplica.statusCode() == 404 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            fromReplica = ItServer.get(ItServer.httpBase() + "/ferret-metrics/api/orders/m-0");
        }
        assertThat(fromReplica.statusCode()).as(fromReplica.body()).isEqualTo(200);
        assertThat(fromReplica.body()).contains("dora");
        // a non-stale read goes to the primary: H2 reports no position the replica could be proven to have reached
        assertThat(ItServer.get(ItServer.httpBase() + "/ferret-metrics/api/orders/m-" + (ORDERS - 1)
                + "?nonStale=true").statusCode()).isEqualTo(200);

        while (SETTLED.get() == null && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }
        Map<String, Double> export = SETTLED.get();
        assertThat(export).as("an export with the orders applied (the last one: %s; the receiver's errors: %s)",
                LAST.get(), RECEIVER_ERRORS).isNotNull();
        assertThat(export).containsKeys(
                "ferret.shard.events_applied|" + SHARD, "ferret.shard.pages_committed|" + SHARD,
                "ferret.shard.progression|" + SHARD, "ferret.shard.lag|" + SHARD, "ferret.high_water_mark|",
                "ferret.high_water_mark.skipped_sequences|", "ferret.shard.page.duration.count|" + SHARD,
                "ferret.shard.append_to_visible.count|" + SHARD);
        assertThat(value(export, "ferret.shard.pages_committed", SHARD)).isGreaterThanOrEqualTo(1);
        assertThat(value(export, "ferret.shard.progression", SHARD)).isGreaterThanOrEqualTo(ORDERS);
        assertThat(value(export, "ferret.high_water_mark", "")).isGreaterThanOrEqualTo(ORDERS);
        assertThat(value(export, "ferret.shard.append_to_visible.count", SHARD)).isGreaterThanOrEqualTo(ORDERS);
        assertThat(value(export, "ferret.shard.page.duration.count", SHARD))
                .isEqualTo(value(export, "ferret.shard.pages_committed", SHARD));
        assertThat(value(export, "ferret.replica.reads", "replica")).as("reads the replica served")
                .isGreaterThanOrEqualTo(1);
        assertThat(value(export, "ferret.replica.reads", "primary_unprovable")).as("non-stale reads of the primary")
                .isGreaterThanOrEqualTo(1);
        assertThat(export).doesNotContainKeys("ferret.replica.reads|replica_caught_up",
                "ferret.replica.reads|primary_replica_behind");
        assertThat(PER_SHARD_POINTS).as("shard names on data points (daemon.metrics-per-shard is off)").isEmpty();
    }

    private static double value(Map<String, Double> export, String name, String shard) {
        return export.getOrDefault(name + "|" + shard, -1.0);
    }
}
