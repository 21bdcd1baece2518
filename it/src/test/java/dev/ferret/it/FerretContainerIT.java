package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.it.app.ItResource;
import dev.ferret.it.dup.DupA;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Jakarta EE binding on a managed server, Open Liberty or WildFly (the build runs this class once on each; see the
 * failsafe executions in the module's pom): deployments are deployed and undeployed by the tests, in order, so each
 * step sees what the last one left (one server start for the whole class).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FerretContainerIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String BASE = ItServer.httpBase();

    @ArquillianResource
    private Deployer deployer;

    private static WebArchive war(String name, String config) {
        return ItServer.war(name, config);
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

    /** A web.xml whose own constraint on the console's path would replace the console's. */
    @Deployment(name = "guarded", managed = false, testable = false)
    static WebArchive guarded() {
        return war("ferret-guarded", """
                ferret.schema=it_guarded
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=DISABLED
                ferret.console.enabled=true
                ferret.console.transport-guarantee=none
                """).setWebXML(new StringAsset("""
                <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
                  <security-constraint>
                    <web-resource-collection>
                      <web-resource-name>everyone</web-resource-name>
                      <url-pattern>/ferret-console/*</url-pattern>
                    </web-resource-collection>
                  </security-constraint>
                </web-app>
                """));
    }

    @Test
    @Order(1)
    void projectionBeansAreDiscoveredAndAppendedEventsBecomeVisible() throws Exception {
        deployer.deploy("main");
        String status = get("/ferret-main/api/status").body();
        assertThat(status).contains("\"mode\":\"SOLO\"").contains("\"running\":true")
                .contains("\"ItOrder:All\":\"RUNNING\"").contains("\"Fragile:All\":\"RUNNING\"")
                .contains("\"notifier:All\":\"RUNNING\"").contains("\"customers:All\":\"RUNNING\"");

        assertThat(post("/ferret-main/api/orders/o-1?customer=alice").statusCode()).isEqualTo(202);
        HttpResponse<String> order = get("/ferret-main/api/orders/o-1?nonStale=true");
        assertThat(order.statusCode()).isEqualTo(200);
        assertThat(order.body()).contains("\"customer\":\"alice\"").contains("\"id\":\"o-1\"");
        // a session opened in a request takes its correlation id from the request's header, or its traceparent
        assertThat(post("/ferret-main/api/orders/o-corr-1?customer=carol", "X-Correlation-ID", "it-flow-1")
                .statusCode()).isEqualTo(202);
        assertThat(post("/ferret-main/api/orders/o-corr-2?customer=carol", "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/correlated/it-flow-1").body()).isEqualTo("[\"o-corr-1\"]");
        assertThat(get("/ferret-main/api/correlated/4bf92f3577b34da6a3ce929d0e0e4736").body())
                .isEqualTo("[\"o-corr-2\"]");
        // the composite bean's second stage read what its first stage wrote for alice (the call waits for every
        // shard to catch up, so the next test starts with none behind)
        assertThat(post("/ferret-main/api/orders/o-1b?customer=alice").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/tiers/alice").body()).contains("\"tier\":\"gold\"")
                .contains("\"orders\":2");
        // the application's EventUpcast producer reached the store
        assertThat(tail(messagesLog(), 0)).contains("1 event upcasts)");
    }

    @Test
    @Order(2)
    void publishedSideEffectsReachTheApplicationsObserversAndItsOptionsHookRan() throws Exception {
        assertThat(post("/ferret-main/api/orders/o-fx?customer=dora").statusCode()).isEqualTo(202);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            String seen = get("/ferret-main/api/announcements").body();
            // every order created so far was announced, in both forms, each message once by id
            assertThat(seen).contains("\"configured\":true").contains("o-1\"").contains("o-fx\"")
                    .doesNotContain("\"commitsSeen\":0");
            assertThat(seen).contains("\"messageIds\":" + count(seen, "\"o-"));
        });
    }

    @Test
    @Order(2)
    void saveChangesJoinsTheCallersJtaTransactionCommittedAndRolledBackTogether() throws Exception {
        assertThat(post("/ferret-main/api/ledger/l-ok").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/ledger/l-ok").body()).isEqualTo("{\"ledgerRows\":1,\"events\":1}");
        assertThat(get("/ferret-main/api/orders/l-ok?nonStale=true").statusCode()).isEqualTo(200);

        assertThat(post("/ferret-main/api/ledger/l-fail?fail=true").statusCode()).isEqualTo(409);
        assertThat(get("/ferret-main/api/ledger/l-fail").body()).isEqualTo("{\"ledgerRows\":0,\"events\":0}");

        // while one caller's transaction stays open after its append, another append commits at once; the open
        // one's events become visible with its commit
        var held = postAsync("/ferret-main/api/ledger/l-held?hold=true");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> get("/ferret-main/api/ledger/l-held/appended").body().equals("true"));
        assertThat(post("/ferret-main/api/orders/o-beside?customer=erin").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/ledger/l-held").body()).isEqualTo("{\"ledgerRows\":0,\"events\":0}");
        assertThat(post("/ferret-main/api/ledger/l-held/release").statusCode()).isEqualTo(202);
        assertThat(held.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/ledger/l-held").body()).isEqualTo("{\"ledgerRows\":1,\"events\":1}");
        assertThat(get("/ferret-main/api/orders/o-beside?nonStale=true").statusCode()).isEqualTo(200);
        assertThat(get("/ferret-main/api/orders/l-held?nonStale=true").statusCode()).isEqualTo(200);
    }

    @Test
    @Order(2)
    void anArchivedStreamLeavesTheLiveLogAndItsProjectionDecidesWhatItsDocumentBecomes() throws Exception {
        assertThat(post("/ferret-main/api/orders/o-arc?customer=fay").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/orders/o-arc?nonStale=true").statusCode()).isEqualTo(200);
        assertThat(post("/ferret-main/api/streams/o-arc/archive").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/streams/o-arc").body())
                .isEqualTo("{\"live\":[2],\"all\":[1,2],\"archived\":true,\"customer\":\"none\"}");
        // ItOrder deletes its document on StreamArchived, which the daemon applies as any event
        assertThat(get("/ferret-main/api/orders/o-arc?nonStale=true").statusCode()).isEqualTo(404);

        assertThat(post("/ferret-main/api/streams/o-arc/archive?back=true").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/streams/o-arc").body())
                .isEqualTo("{\"live\":[1,3],\"all\":[1,2,3],\"archived\":false,\"customer\":\"fay\"}");

        // compacted: the order folds from its snapshot event, the original in the archive
        assertThat(post("/ferret-main/api/streams/o-arc/compact?through=1").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/streams/o-arc").body())
                .isEqualTo("{\"live\":[1,3],\"all\":[1,1,2,3],\"archived\":false,\"customer\":\"fay\"}");
    }

    @Test
    @Order(2)
    void healthReportsEveryShard() throws Exception {
        HttpResponse<String> ready = health("/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).contains("ferret-store").contains("\"daemonRunning\":true");
        HttpResponse<String> live = health("/health/live");
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(live.body()).contains("\"ItOrder:All.state\":\"RUNNING\"").contains("\"ItOrder:All.lag\":0")
                .contains("\"Fragile:All.state\":\"RUNNING\"").contains("ItOrder:All.progression");
        // registered once each, whatever bean archive the server puts the extension's beans in
        assertThat(count(ready.body(), "\"ferret-store\"")).as(ready.body()).isEqualTo(1);
        assertThat(count(live.body(), "\"ferret-daemon\"")).as(live.body()).isEqualTo(1);
    }

    @Test
    @Order(3)
    void aPausedShardKeepsLivenessUpAndIsNamedAsAHealthProblemWithoutEventData() throws Exception {
        assertThat(post("/ferret-main/api/poison/o-2").statusCode()).isEqualTo(202);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            HttpResponse<String> live = health("/health/live");
            // a restart would pause at the same event: liveness stays UP, the problem is named
            assertThat(live.statusCode()).isEqualTo(200);
            assertThat(live.body()).contains("\"Fragile:All.state\":\"PAUSED\"")
                    .contains("\"ItOrder:All.state\":\"RUNNING\"").contains("healthProblem.1")
                    .contains("shard Fragile:All is paused");
            // the error's message names the stream: it stays out of health output
            assertThat(live.body()).doesNotContain("o-2");
            HttpResponse<String> ready = health("/health/ready");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).contains("\"healthy\":false").contains("shard Fragile:All is paused")
                    .doesNotContain("o-2");
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
        assertDeploymentFails("duplicate", "duplicate projection name 'Dup' (version 1)", "dev.ferret.it.dup.DupA",
                "dev.ferret.it.dup.DupB", "subscription dev.ferret.it.dup.DupSubscription", "are both named 'Dup'");
        assertThat(get("/ferret-duplicate/api/status").statusCode()).isEqualTo(404);
    }

    @Test
    @Order(5)
    void aWebXmlConstraintOnTheConsolesPathFailsTheDeploymentOrClosesTheConsoleNamingIt() throws Exception {
        Path log = messagesLog();
        long before = Files.exists(log) ? Files.size(log) : 0;
        boolean deployed;
        try {
            deployer.deploy("guarded");
            deployed = true;
        } catch (Exception failed) {
            // the server refused it: WildFly's answer
            deployed = false;
        }
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(tail(log, before))
                .contains("declares a security constraint for [/ferret-console/*]"));
        // WildFly fails the deployment; Open Liberty logs the initializer's failure and starts the application,
        // whose console then refuses everything, naming why, to anyone (the web.xml let every caller through)
        HttpResponse<String> console = get("/ferret-guarded/ferret-console/api/status");
        if (deployed) {
            assertThat(console.statusCode()).isEqualTo(503);
            assertThat(console.body()).contains("declares a security constraint").doesNotContain("csrfToken");
            deployer.undeploy("guarded");
        } else {
            assertThat(console.statusCode()).isEqualTo(404);
        }
    }

    /** Deploying {@code name} fails, and the server's log says each of {@code logged}. */
    private void assertDeploymentFails(String name, String... logged) throws IOException {
        Path log = messagesLog();
        long before = Files.exists(log) ? Files.size(log) : 0;
        assertThatThrownBy(() -> deployer.deploy(name)).isInstanceOf(Exception.class);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(tail(log, before)).contains(logged));
        try {
            deployer.undeploy(name);
        } catch (RuntimeException ignored) {
            // it never started
        }
    }

    @Test
    @Order(6)
    void aRestartedApplicationReadsBackAnEventTypeOnlyAnEventProjectionDeclares() throws Exception {
        // written by this deployment, and projected only by the next one, which has not appended a Noted itself
        assertThat(post("/ferret-main/api/hold/Notes:All").statusCode()).isEqualTo(202);
        assertThat(post("/ferret-main/api/notes/n-1?text=kept").statusCode()).isEqualTo(202);
        assertThat(get("/ferret-main/api/notes/n-1").statusCode()).isEqualTo(404);
        deployer.undeploy("main");
        deployer.deploy("main");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            HttpResponse<String> note = get("/ferret-main/api/notes/n-1");
            assertThat(note.statusCode()).isEqualTo(200);
            assertThat(note.body()).contains("\"text\":\"kept\"");
        });
        assertThat(get("/ferret-main/api/status").body()).contains("\"Notes:All\":\"RUNNING\"");
    }

    @Test
    @Order(7)
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
        return ItServer.log();
    }

    private static String tail(Path log, long from) throws IOException {
        return ItServer.tail(log, from);
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return ItServer.get(BASE + path);
    }

    /** Health is on the HTTP port on Liberty and on the management port on WildFly. */
    private static HttpResponse<String> health(String path) throws IOException, InterruptedException {
        return ItServer.get(ItServer.healthBase() + path);
    }

    private static HttpResponse<String> post(String path, String... headers) throws IOException, InterruptedException {
        return ItServer.post(BASE + path, headers);
    }

    private static CompletableFuture<HttpResponse<String>> postAsync(String path) {
        return ItServer.postAsync(BASE + path);
    }
}
