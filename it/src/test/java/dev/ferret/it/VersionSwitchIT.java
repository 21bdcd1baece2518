package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.it.versions.Tally;
import dev.ferret.it.versions.TallyVersion1;
import dev.ferret.it.versions.TallyVersion2;
import dev.ferret.it.versions.Tick;
import dev.ferret.it.versions.VersionGate;
import dev.ferret.it.versions.VersionResource;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A blue/green deploy in the container: the first deployment projects tallies with version 1; the next replaces it
 * with version 2 of the same projection on the same schema. While version 2 replays (held on its first event), query
 * sessions read version 1's documents, the status says version 2 does not serve reads yet, and once it has caught up
 * reads switch to its documents by themselves.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class VersionSwitchIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String CONFIG = """
            ferret.schema=it_versions
            ferret.apply-all-database-changes-on-startup=true
            ferret.daemon.mode=SOLO
            ferret.daemon.polling-interval=PT0.1S
            """;

    @ArquillianResource
    private Deployer deployer;

    private static WebArchive war(String name, Class<?> projection) {
        return ItServer.war(name, CONFIG).addClasses(Tick.class, Tally.class, VersionGate.class,
                VersionResource.class, VersionResource.App.class, projection);
    }

    @Deployment(name = "v1", managed = false, testable = false)
    static WebArchive version1() {
        return war("ferret-versions-1", TallyVersion1.class);
    }

    @Deployment(name = "v2", managed = false, testable = false)
    static WebArchive version2() {
        return war("ferret-versions-2", TallyVersion2.class);
    }

    private static String api(int version, String path) {
        return ItServer.httpBase() + "/ferret-versions-" + version + "/api/" + path;
    }

    @Test
    void theNextVersionWarmsUpBehindThePriorOnesDocumentsThenServesReadsByItself() throws Exception {
        deployer.deploy("v1");
        try {
            assertThat(ItServer.post(api(1, "ticks/a?count=5")).statusCode()).isEqualTo(202);
            assertThat(ItServer.post(api(1, "ticks/b?count=3")).statusCode()).isEqualTo(202);
            HttpResponse<String> first = ItServer.get(api(1, "tallies/a?nonStale=true"));
            assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
            assertThat(first.body()).contains("\"value\":5");
        } finally {
            deployer.undeploy("v1");
        }

        deployer.deploy("v2");
        try {
            HttpResponse<String> reads = ItServer.get(api(2, "reads"));
            assertThat(reads.body()).as("held on its first event, version 2 does not serve reads")
                    .contains("\"version\":1").contains("\"Tally:V2:All\":false");
            HttpResponse<String> during = ItServer.get(api(2, "tallies/a"));
            assertThat(during.statusCode()).as("version 1's documents, not an empty table: %s", during.body())
                    .isEqualTo(200);
            assertThat(during.body()).contains("\"value\":5");

            assertThat(ItServer.post(api(2, "gate")).statusCode()).isEqualTo(202);
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(ItServer.get(api(2, "reads")).body()).contains("\"version\":2")
                            .contains("\"Tally:V2:All\":true"));
            assertThat(ItServer.get(api(2, "tallies/a")).body()).contains("\"value\":500");
            assertThat(ItServer.get(api(2, "tallies/b")).body()).contains("\"value\":300");
        } finally {
            ItServer.post(api(2, "gate"));
            deployer.undeploy("v2");
        }
    }
}
