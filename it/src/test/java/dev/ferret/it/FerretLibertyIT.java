package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.it.app.ItResource;
import dev.ferret.it.dup.DupA;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Jakarta EE binding on a managed Open Liberty: deployments are deployed and undeployed by the tests, in order,
 * so each step sees what the last one left (one server start for the whole class).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FerretLibertyIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String BASE = "http://localhost:" + System.getProperty("it.http.port", "9181");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @ArquillianResource
    private Deployer deployer;

    private static WebArchive war(String name, String config) {
        WebArchive war = ShrinkWrap.create(WebArchive.class, name + ".war")
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml")
                .addAsResource(new StringAsset(config), "META-INF/microprofile-config.properties");
        File[] libs = new File(System.getProperty("it.war.libs", "target/war-libs")).listFiles();
        assertThat(libs).as("jars from target/war-libs").isNotEmpty();
        war.addAsLibraries(libs);
        return war;
    }

    @Deployment(name = "main", managed = false, testable = false)
    static WebArchive main() {
        return war("ferret-main", """
                ferret.schema=it_main
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=solo
                ferret.daemon.polling-interval=PT0.1S
                """).addPackage(ItResource.class.getPackage());
    }

    @Deployment(name = "disabled", managed = false, testable = false)
    static WebArchive disabled() {
        return war("ferret-disabled", """
                ferret.schema=it_disabled
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=DISABLED
                """).addPackage(ItResource.class.getPackage());
    }

    @Deployment(name = "duplicate", managed = false, testable = false)
    static WebArchive duplicate() {
        return war("ferret-duplicate", """
                ferret.schema=it_dup
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=SOLO
                """).addPackage(DupA.class.getPackage());
    }

    @Test
    @Order(1)
    void projectionBeansAreDiscoveredAndAppendedEventsBecomeVisible() throws Exception {
        deployer.deploy("main");
        String status = get("/ferret-main/api/status").body();
        assertThat(status).contains("\"mode\":\"SOLO\"").contains("\"running\":true")
                .contains("\"ItOrder:All\":\"RUNNING\"").contains("\"Fragile:All\":\"RUNNING\"")
                .contains("\"notifier:All\":\"RUNNING\"");

        assertThat(post("/ferret-main/api/orders/o-1?customer=alice").statusCode()).isEqualTo(202);
        HttpResponse<String> order = get("/ferret-main/api/orders/o-1?nonStale=true");
        assertThat(order.statusCode()).isEqualTo(200);
        assertThat(order.body()).contains("\"customer\":\"alice\"").contains("\"id\":\"o-1\"");
    }

    @Test
    @Order(2)
    void healthReportsEveryShard() throws Exception {
        HttpResponse<String> ready = get("/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("ferret-store").contains("\"daemonRunning\":true");
        HttpResponse<String> live = get("/health/live");
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(live.body()).contains("\"ItOrder:All.state\":\"RUNNING\"").contains("\"ItOrder:All.lag\":0")
                .contains("\"Fragile:All.state\":\"RUNNING\"").contains("ItOrder:All.progression");
    }

    @Test
    @Order(3)
    void aPausedShardTurnsLivenessDown() throws Exception {
        assertThat(post("/ferret-main/api/poison/o-2").statusCode()).isEqualTo(202);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            HttpResponse<String> live = get("/health/live");
            assertThat(live.statusCode()).isEqualTo(503);
            assertThat(live.body()).contains("\"Fragile:All.state\":\"PAUSED\"").contains("poison in o-2")
                    .contains("\"ItOrder:All.state\":\"RUNNING\"");
        });
    }

    @Test
    @Order(4)
    void daemonModeDisabledByConfigurationProjectsNothing() throws Exception {
        deployer.deploy("disabled");
        assertThat(get("/ferret-disabled/api/status").body()).contains("\"mode\":\"DISABLED\"")
                .contains("\"running\":false");
        assertThat(post("/ferret-disabled/api/orders/d-1?customer=bob").statusCode()).isEqualTo(202);
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300))
                .untilAsserted(() -> assertThat(get("/ferret-disabled/api/orders/d-1").statusCode()).isEqualTo(404));
        // and a non-stale wait says plainly that there is no daemon here
        assertThat(get("/ferret-disabled/api/orders/d-1?nonStale=true").body()).contains("not running");
    }

    @Test
    @Order(5)
    void aDuplicateProjectionNameAndASubscriptionNamedLikeAProjectionFailTheDeployment() throws Exception {
        Path log = messagesLog();
        long before = Files.exists(log) ? Files.size(log) : 0;
        assertThatThrownBy(() -> deployer.deploy("duplicate")).isInstanceOf(Exception.class);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(tail(log, before))
                .contains("duplicate projection name 'Dup' (version 1)")
                .contains("dev.ferret.it.dup.DupA").contains("dev.ferret.it.dup.DupB")
                .contains("subscription dev.ferret.it.dup.DupSubscription").contains("are both named 'Dup'"));
        try {
            deployer.undeploy("duplicate");
        } catch (RuntimeException ignored) {
            // it never started
        }
        assertThat(get("/ferret-duplicate/api/status").statusCode()).isEqualTo(404);
    }

    @Test
    @Order(6)
    void undeployingStopsTheAgents() throws Exception {
        Path log = messagesLog();
        long before = Files.size(log);
        deployer.undeploy("main");
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(tail(log, before))
                .contains("Stopping the Ferret store and its daemon").contains("Async daemon stopped"));
        assertThat(get("/ferret-main/api/status").statusCode()).isEqualTo(404);
        // no Ferret thread of its own, and no pool thread running daemon code any more
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(get("/ferret-disabled/api/threads").body()).isEqualTo("[]"));
        long startedBefore = count(tail(log, 0), "Async daemon started");
        long stoppedBefore = count(tail(log, 0), "Async daemon stopped");
        assertThat(stoppedBefore).as("every daemon started was stopped").isEqualTo(startedBefore);
        deployer.undeploy("disabled");
    }

    private static long count(String text, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text);
        long n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static Path messagesLog() {
        return Path.of(System.getProperty("it.server.logs", "target/liberty/wlp/usr/servers/ferretIT/logs"),
                "messages.log");
    }

    private static String tail(Path log, long from) throws IOException {
        byte[] all = Files.readAllBytes(log);
        int start = (int) Math.min(from, all.length);
        return new String(all, start, all.length - start, StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(90))
                .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(90))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }
}
