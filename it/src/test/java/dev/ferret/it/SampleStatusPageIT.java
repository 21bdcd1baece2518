package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The liberty-sample WAR, deployed as built on each server (as {@code ferret.war}; its {@code jboss-web.xml} puts it at
 * {@code /ferret} on WildFly as well), and its
 * HTML status page looked at by headless Chromium (the browser build/ensure-chromium.sh found): the
 * page must show a shard row, and a screenshot of it is left in {@code target/screenshots}.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class SampleStatusPageIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final Pattern SHARD_ROW = Pattern.compile(
            "<tr class=\"shard\"><td>([^<]+)</td><td class=\"([A-Z_]+)\">");

    @ArquillianResource
    private URL base;

    @Deployment(testable = false)
    static WebArchive sample() {
        return ItServer.sampleWar();
    }

    @Test
    void theStatusPageShowsTheShardsInChromium() throws Exception {
        Browser browser = Browser.found();
        Path chromium = browser.chromium();
        assertThat(Files.isExecutable(chromium))
                .as("%s is needed (build/ensure-chromium.sh installs it before the tests)", chromium)
                .isTrue();

        // one order, so the projections have something to show
        HttpResponse<String> placed = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.toURI().resolve("api/orders"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"orderId\":\"order-1\",\"customer\":\"alice\",\"amountCents\":4200}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(placed.statusCode()).as(placed.body()).isEqualTo(202);
        // the order folded from its events at once, then shipped by a command handler at the version it read
        HttpResponse<String> live = send(HttpRequest.newBuilder(base.toURI().resolve("api/orders/order-1/live")).GET());
        assertThat(live.statusCode()).as(live.body()).isEqualTo(200);
        assertThat(live.body()).contains("\"status\":\"placed\"").contains("\"customer\":\"alice\"");
        HttpResponse<String> shipped = send(HttpRequest.newBuilder(base.toURI().resolve("api/orders/order-1/ship"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(shipped.statusCode()).as(shipped.body()).isEqualTo(202);
        HttpResponse<String> again = send(HttpRequest.newBuilder(base.toURI().resolve("api/orders/order-1/ship"))
                .POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(again.statusCode()).as(again.body()).isEqualTo(409);
        assertThat(again.body()).contains("is shipped");
        // the paged, filtered, ordered listing, through the sample's declared index
        HttpResponse<String> listed = send(HttpRequest.newBuilder(base.toURI()
                .resolve("api/orders?status=shipped&limit=10&nonStale=true")).GET());
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        assertThat(listed.body()).contains("\"id\":\"order-1\"").contains("\"status\":\"shipped\"");

        Path out = Files.createDirectories(Path.of(System.getProperty("it.screenshots", "target/screenshots")));
        Path screenshot = out.resolve("sample-status-page.png");
        Files.deleteIfExists(screenshot);
        URI page = base.toURI().resolve("api/status");

        long deadline = System.nanoTime() + PATIENCE.toNanos();
        String dom = "";
        List<String> running = List.of();
        while (System.nanoTime() < deadline) {
            dom = chromium(chromium, page, screenshot, out);
            running = runningShards(dom);
            if (!running.isEmpty()) {
                break;
            }
            Thread.sleep(500);
        }
        assertThat(dom).as("the page Chromium rendered").contains("<h1>Ferret daemon</h1>")
                .contains("<table id=\"shards\">");
        assertThat(running).as("RUNNING shard rows in %s", dom).isNotEmpty();
        assertThat(screenshot).as("the screenshot").isNotEmptyFile();
        byte[] png = Files.readAllBytes(screenshot);
        assertThat(new String(png, 1, 3, StandardCharsets.ISO_8859_1)).as("a PNG").isEqualTo("PNG");
    }

    private static List<String> runningShards(String dom) {
        List<String> names = new ArrayList<>();
        Matcher m = SHARD_ROW.matcher(dom);
        while (m.find()) {
            if ("RUNNING".equals(m.group(2))) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    /** Loads the page once in headless Chromium: writes the screenshot and returns the DOM after load. */
    private static String chromium(Path chromium, URI page, Path screenshot, Path out) throws Exception {
        Path profile = Files.createTempDirectory(out, "chromium-profile-");
        Path dom = out.resolve("sample-status-page.html");
        Path log = out.resolve("chromium.log");
        try {
            Process process = new ProcessBuilder(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile.toAbsolutePath(),
                    "--window-size=1280,720", "--screenshot=" + screenshot.toAbsolutePath(), "--dump-dom",
                    page.toString())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(dom.toFile()).redirectError(log.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail("Chromium did not finish within 60 s loading %s; see %s", page, log);
            }
            assertThat(process.exitValue()).as("Chromium's exit code; see %s", log).isZero();
            return Files.readString(dom, StandardCharsets.UTF_8);
        } finally {
            deleteTree(profile);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return HttpClient.newHttpClient().send(request.timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
