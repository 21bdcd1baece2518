package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.it.app.ItResource;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.as.arquillian.container.ManagementClient;
import org.jboss.as.controller.client.helpers.Operations;
import org.jboss.dmr.ModelNode;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * WildFly only (the Liberty run excludes {@code WildFly*IT}): a graceful {@code :suspend} makes the container refuse
 * every task the daemon schedules (WFLYEE0111) and may drop the ones already queued. After {@code :resume} the
 * daemon must project again by itself, with nothing redeployed or restarted, and its liveness must be UP.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class WildFlySuspendResumeIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String APP = ItServer.httpBase() + "/ferret-suspend/api";

    @ArquillianResource
    private ManagementClient management;

    @Deployment(testable = false)
    static WebArchive app() {
        return ItServer.war("ferret-suspend", """
                ferret.schema=it_suspend
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=solo
                ferret.daemon.polling-interval=PT0.1S
                """).addPackage(ItResource.class.getPackage());
    }

    @Test
    void afterSuspendAndResumeTheDaemonProjectsAgainAndStaysLive() throws Exception {
        assertThat(ItServer.post(APP + "/orders/s-1?customer=before").statusCode()).isEqualTo(202);
        assertThat(ItServer.get(APP + "/orders/s-1?nonStale=true").body()).contains("\"customer\":\"before\"");

        Path log = ItServer.log();
        long before = ItServer.size(log);
        execute(Operations.createOperation("suspend"));
        try {
            await().atMost(PATIENCE).untilAsserted(() -> assertThat(suspendState()).isEqualTo("SUSPENDED"));
            // the fault under test: the container dropped a run the daemon had scheduled (it only logs it)
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250))
                    .untilAsserted(() -> assertThat(ItServer.tail(log, before)).contains("WFLYEE0111"));
        } finally {
            // whatever failed above, the classes after this one need a running server
            execute(Operations.createOperation("resume"));
        }
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(suspendState()).isEqualTo("RUNNING"));

        assertThat(ItServer.post(APP + "/orders/s-2?customer=after").statusCode()).isEqualTo(202);
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            HttpResponse<String> order = ItServer.get(APP + "/orders/s-2");
            assertThat(order.statusCode()).isEqualTo(200);
            assertThat(order.body()).contains("\"customer\":\"after\"");
        });
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            HttpResponse<String> live = ItServer.get(ItServer.healthBase() + "/health/live");
            assertThat(live.statusCode()).as(live.body()).isEqualTo(200);
            assertThat(live.body()).contains("\"ItOrder:All.state\":\"RUNNING\"");
        });
    }

    private String suspendState() throws Exception {
        ModelNode read = Operations.createReadAttributeOperation(new ModelNode().setEmptyList(), "suspend-state");
        return execute(read).asString();
    }

    private ModelNode execute(ModelNode operation) throws Exception {
        ModelNode outcome = management.getControllerClient().execute(operation);
        assertThat(Operations.isSuccessfulOutcome(outcome)).as("%s gave %s", operation, outcome).isTrue();
        return Operations.readResult(outcome);
    }
}
