package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.example.orders.Orders;
import java.io.File;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's quick start, deployed as a newcomer would build it: its own classes and configuration file
 * ({@code docs/examples/quickstart}), no beans.xml, and the jars of the one dependency {@code dev.ferret:ferret-cdi}
 * with no exclusions (target/war-libs, copied from that dependency). An order placed through its resource is
 * projected by the daemon into the document its resource then returns.
 */
@ExtendWith(ArquillianExtension.class)
class QuickStartIT {

    @ArquillianResource
    private URL base;

    @Deployment(testable = false)
    static WebArchive quickStart() throws Exception {
        Path config = Path.of(QuickStartIT.class.getResource("/quickstart/META-INF/microprofile-config.properties")
                .toURI());
        // the server's own lines (WildFly's long-running executor) follow the quick start's, unchanged
        String properties = Files.readString(config) + System.getProperty("it.extra.config", "") + "\n";
        File[] libs = new File(System.getProperty("it.war.libs", "target/war-libs")).listFiles();
        assertThat(libs).as("the jars of dev.ferret:ferret-cdi").isNotEmpty();
        assertThat(libs).extracting(File::getName).noneMatch(name -> name.startsWith("yasson")
                || name.startsWith("parsson") || name.startsWith("h2-") || name.startsWith("jakarta.json"));
        return ShrinkWrap.create(WebArchive.class, "quickstart.war")
                .addPackage(Orders.class.getPackage())
                .addAsResource(new StringAsset(properties), "META-INF/microprofile-config.properties")
                .addAsLibraries(libs);
    }

    @Test
    void anOrderPlacedThroughTheQuickStartIsProjectedIntoItsSummary() {
        HttpClient http = HttpClient.newHttpClient();
        URI orders = URI.create(base.toExternalForm()).resolve("api/orders/");
        HttpResponse<String> placed = send(http, HttpRequest.newBuilder(orders.resolve("order-7/alice/4200"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(placed.statusCode()).as(placed.body()).isBetween(200, 204);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            HttpResponse<String> summary = send(http, HttpRequest.newBuilder(orders.resolve("order-7")).GET());
            assertThat(summary.statusCode()).isEqualTo(200);
            assertThat(summary.body()).contains("\"customer\":\"alice\"").contains("\"amountCents\":4200")
                    .contains("\"status\":\"placed\"");
        });
        // a second placement of the same order is refused: the stream must not exist yet
        HttpResponse<String> again = send(http, HttpRequest.newBuilder(orders.resolve("order-7/alice/4200"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(again.statusCode()).isGreaterThanOrEqualTo(400);
    }

    private static HttpResponse<String> send(HttpClient http, HttpRequest.Builder request) {
        try {
            return http.send(request.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
