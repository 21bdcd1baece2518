package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.StringReader;
import java.net.CookieManager;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The operator's console the extension serves in the sample WAR (enabled by its configuration), on each server:
 * anonymous callers are refused everything, the viewer sees but cannot act, an action needs the session's CSRF token,
 * and headless Chromium, logged in as the operator, follows a poison event from the paused shard to its dead letter
 * and its discard, and a rebuild's progress bar to done. Screenshots go to {@code target/screenshots/<server>}.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ConsoleIT {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    private static final String OPERATOR = "operator";
    private static final String OPERATOR_PASSWORD = "Operator-Pass-1";
    private static final String VIEWER = "viewer";
    private static final String VIEWER_PASSWORD = "Viewer-Pass-1";
    private static final List<String> ACTIONS = List.of("hold", "restart", "skip", "rebuild", "replay", "discard");

    @ArquillianResource
    private URL base;

    @Deployment(testable = false)
    static WebArchive sample() {
        return ItServer.sampleWar();
    }

    private URI console(String path) throws Exception {
        return base.toURI().resolve("console/" + path);
    }

    /** A client with its own cookie jar (the console's CSRF token lives in the HTTP session). */
    private static HttpClient client() {
        return HttpClient.newBuilder().cookieHandler(new CookieManager()).connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    private static HttpResponse<String> send(HttpClient client, HttpRequest.Builder request, String user,
                                             String password) throws IOException, InterruptedException {
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        return client.send(request.timeout(PATIENCE).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonObject json(HttpResponse<String> response) {
        return Json.createReader(new StringReader(response.body())).readObject();
    }

    @Test
    void anonymousCallersAreRefusedEverythingAndTheViewerSeesButCannotAct() throws Exception {
        HttpClient anonymous = client();
        for (String path : List.of("", "api/status", "api/dead-letters?shard=x")) {
            HttpResponse<String> response = send(anonymous, HttpRequest.newBuilder(console(path)).GET(), null, null);
            assertThat(response.statusCode()).as("GET %s anonymously", path).isIn(401, 403);
        }
        for (String action : ACTIONS) {
            HttpResponse<String> response = send(anonymous, HttpRequest.newBuilder(console("api/" + action
                    + "?shard=x&projection=x&id=1")).POST(HttpRequest.BodyPublishers.noBody()), null, null);
            assertThat(response.statusCode()).as("POST %s anonymously", action).isIn(401, 403);
        }
        HttpResponse<String> wrongPassword = send(anonymous, HttpRequest.newBuilder(console("api/status")).GET(),
                OPERATOR, "not-the-password");
        assertThat(wrongPassword.statusCode()).isIn(401, 403);

        HttpClient viewer = client();
        HttpResponse<String> seen = send(viewer, HttpRequest.newBuilder(console("api/status")).GET(), VIEWER,
                VIEWER_PASSWORD);
        assertThat(seen.statusCode()).as(seen.body()).isEqualTo(200);
        JsonObject session = json(seen).getJsonObject("session");
        assertThat(session.getString("user")).isEqualTo(VIEWER);
        assertThat(session.getBoolean("operator")).isFalse();
        String shard = json(seen).getJsonArray("shards").getJsonObject(0).getString("name");
        HttpResponse<String> refused = send(viewer, HttpRequest.newBuilder(console("api/hold?shard=" + shard))
                .header("X-Ferret-CSRF", session.getString("csrfToken"))
                .POST(HttpRequest.BodyPublishers.noBody()), VIEWER, VIEWER_PASSWORD);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
        assertThat(refused.body()).contains("ferret-operator");

        // the operator with no token, or another session's, is refused too; with the session's own it acts
        HttpClient operator = client();
        HttpResponse<String> noToken = send(operator, HttpRequest.newBuilder(console("api/hold?shard=" + shard))
                .POST(HttpRequest.BodyPublishers.noBody()), OPERATOR, OPERATOR_PASSWORD);
        assertThat(noToken.statusCode()).as(noToken.body()).isEqualTo(403);
        assertThat(noToken.body()).contains("CSRF");
        String token = json(send(operator, HttpRequest.newBuilder(console("api/status")).GET(), OPERATOR,
                OPERATOR_PASSWORD)).getJsonObject("session").getString("csrfToken");
        HttpResponse<String> otherToken = send(operator, HttpRequest.newBuilder(console("api/hold?shard=" + shard))
                .header("X-Ferret-CSRF", session.getString("csrfToken")).POST(HttpRequest.BodyPublishers.noBody()),
                OPERATOR, OPERATOR_PASSWORD);
        assertThat(otherToken.statusCode()).as(otherToken.body()).isEqualTo(403);
        HttpResponse<String> held = send(operator, HttpRequest.newBuilder(console("api/hold?shard=" + shard))
                .header("X-Ferret-CSRF", token).POST(HttpRequest.BodyPublishers.noBody()), OPERATOR,
                OPERATOR_PASSWORD);
        assertThat(held.statusCode()).as(held.body()).isEqualTo(200);
        assertThat(shardState(operator, shard)).isEqualTo("HELD");
        HttpResponse<String> restarted = send(operator, HttpRequest.newBuilder(console("api/restart?shard=" + shard))
                .header("X-Ferret-CSRF", token).POST(HttpRequest.BodyPublishers.noBody()), OPERATOR,
                OPERATOR_PASSWORD);
        assertThat(restarted.statusCode()).as(restarted.body()).isEqualTo(200);
        assertThat(shardState(operator, shard)).isEqualTo("RUNNING");
        HttpResponse<String> unknown = send(operator, HttpRequest.newBuilder(console("api/hold?shard=Nothing:All"))
                .header("X-Ferret-CSRF", token).POST(HttpRequest.BodyPublishers.noBody()), OPERATOR,
                OPERATOR_PASSWORD);
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(400);
        assertThat(unknown.body()).contains("Nothing:All");

        // every action is in the server log with who ran it
        assertThat(Files.readString(ItServer.log(), StandardCharsets.UTF_8))
                .contains("Ferret console: operator ran hold shard=" + shard + ": held")
                .contains("Ferret console: viewer was refused hold shard=" + shard);
    }

    @Test
    void theStatusPagesAndFiltersShardsAndRefusesAFilterItCannotRead() throws Exception {
        HttpClient viewer = client();
        JsonObject first = json(send(viewer, HttpRequest.newBuilder(console("api/status?limit=1")).GET(), VIEWER,
                VIEWER_PASSWORD));
        JsonObject page = first.getJsonObject("page");
        assertThat(first.getJsonArray("shards")).hasSize(1);
        assertThat(page.getInt("matched")).as("%s", first).isGreaterThan(1);
        assertThat(page.getBoolean("hasMore")).isTrue();
        assertThat(first.getJsonObject("summary").getInt("shards")).isEqualTo(page.getInt("matched"));
        String second = json(send(viewer, HttpRequest.newBuilder(console("api/status?limit=1&offset=1")).GET(),
                VIEWER, VIEWER_PASSWORD)).getJsonArray("shards").getJsonObject(0).getString("name");
        assertThat(second).isGreaterThan(first.getJsonArray("shards").getJsonObject(0).getString("name"));
        JsonObject dashboard = json(send(viewer, HttpRequest.newBuilder(console("api/status?projection=Dashboard"))
                .GET(), VIEWER, VIEWER_PASSWORD));
        assertThat(dashboard.getJsonArray("shards").getValuesAs(JsonObject.class))
                .extracting(shard -> shard.getString("name")).containsExactly("Dashboard:All");
        assertThat(dashboard.getJsonArray("shards").getJsonObject(0).getString("database")).isEqualTo("default");

        HttpResponse<String> refused = send(viewer, HttpRequest.newBuilder(console("api/status?state=SLEEPING"))
                .GET(), VIEWER, VIEWER_PASSWORD);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).contains("state").contains("SLEEPING");
    }

    private String shardState(HttpClient client, String shard) throws Exception {
        JsonArray shards = json(send(client, HttpRequest.newBuilder(console("api/status")).GET(), OPERATOR,
                OPERATOR_PASSWORD)).getJsonArray("shards");
        return shards.stream().map(JsonObject.class::cast).filter(s -> s.getString("name").equals(shard))
                .findFirst().orElseThrow().getString("state");
    }

    @Test
    void inChromiumTheOperatorSkipsAPoisonEventDiscardsItsDeadLetterAndWatchesARebuild() throws Exception {
        Browser found = Browser.found();
        Path chromium = found.chromium();
        Path chromedriver = found.chromedriver();
        assertThat(chromium).as("the browser build/ensure-chromium.sh found").isExecutable();
        assertThat(chromedriver).as("the chromedriver build/ensure-chromium.sh found").isExecutable();
        Path screenshots = Files.createDirectories(Path.of(System.getProperty("it.screenshots",
                "target/screenshots")));

        // an order, then an item the OrderSummary projection refuses: its shard pauses
        HttpClient client = client();
        post(client, "api/orders", "{\"orderId\":\"console-1\",\"customer\":\"carol\",\"amountCents\":1200}");
        post(client, "api/orders/console-1/items", "{\"sku\":\"nothing\",\"quantity\":0,\"priceCents\":500}");
        JsonObject status = json(send(client, HttpRequest.newBuilder(console("api/status")).GET(), OPERATOR,
                OPERATOR_PASSWORD));
        Set<String> shards = new TreeSet<>();
        String summary = null;
        for (JsonObject shard : status.getJsonArray("shards").getValuesAs(JsonObject.class)) {
            shards.add(shard.getString("name"));
            if (shard.getString("projection").equals("OrderSummary")) {
                summary = shard.getString("name");
            }
        }
        assertThat(summary).as("the OrderSummary shard in %s", status).isNotNull();
        // one SOLO node: it runs every shard, and names itself so
        assertThat(status.getString("node")).isEqualTo("solo");
        assertThat(status.getJsonArray("shards").getValuesAs(JsonObject.class))
                .allSatisfy(shard -> assertThat(shard.getBoolean("runsHere")).as("%s", shard).isTrue())
                // no projection of the sample has a second version: every shard serves its documents' reads
                .allSatisfy(shard -> assertThat(shard.getBoolean("servesReads")).as("%s", shard).isTrue());

        ChromeOptions options = new ChromeOptions().setBinary(chromium.toFile()).addArguments("--headless",
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(chromedriver.toFile())
                .build();
        ChromeDriver browser = new ChromeDriver(service, options);
        try {
            // the operator's Basic credentials on every request the page makes, its fetches included
            browser.executeCdpCommand("Network.enable", Map.of());
            browser.executeCdpCommand("Network.setExtraHTTPHeaders", Map.of("headers", Map.of("Authorization",
                    "Basic " + Base64.getEncoder().encodeToString((OPERATOR + ":" + OPERATOR_PASSWORD)
                            .getBytes(StandardCharsets.UTF_8)))));
            browser.get(console("").toString());
            WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
            wait.ignoring(StaleElementReferenceException.class);

            // every shard is shown
            wait.until(d -> rowNames(d).containsAll(shards));
            String shard = summary;
            String row = "tr.shard[data-shard='" + shard + "']";
            wait.until(d -> d.findElement(By.cssSelector(row)).getAttribute("data-state").equals("PAUSED"));
            assertThat(browser.findElement(By.cssSelector(row + " td.error")).getText())
                    .contains("an item quantity must be at least 1");
            screenshot(browser, screenshots.resolve("console-paused.png"));

            click(wait, row + " button[data-action='skip']");
            wait.until(d -> d.findElement(By.cssSelector(row)).getAttribute("data-state").equals("RUNNING")
                    && d.findElement(By.cssSelector(row + " td.dead-letter-count")).getText().startsWith("1"));
            click(wait, row + " button[data-show-dead-letters]");
            wait.until(d -> d.findElement(By.cssSelector("#dead-letters pre.event-json")).getText()
                    .contains("\"quantity\": 0"));
            screenshot(browser, screenshots.resolve("console-dead-letter.png"));
            click(wait, "#dead-letters button[data-action='discard']");
            wait.until(d -> d.findElement(By.cssSelector(row + " td.dead-letter-count")).getText().equals("0"));
            assertThat(browser.findElement(By.id("message")).getText()).contains("discarded");

            // filtered to one projection: only its rows, and the count says so
            browser.findElement(By.id("filter-projection")).sendKeys("Dashboard");
            click(wait, "#filter-apply");
            wait.until(d -> rowNames(d).equals(Set.of("Dashboard:All"))
                    && d.findElement(By.id("page-info")).getText().equals("shards 1–1 of 1 matching"));
            screenshot(browser, screenshots.resolve("console-filtered.png"));

            // a rebuild of the dashboard: its progress bar reaches done
            click(wait, "tr.shard[data-shard='Dashboard:All'] button[data-action='rebuild']");
            wait.until(d -> !d.findElements(By.cssSelector("tr.rebuild[data-state='done'][data-percent='100']"))
                    .isEmpty());
            screenshot(browser, screenshots.resolve("console-rebuilt.png"));
        } catch (RuntimeException | AssertionError e) {
            // what the page showed when it failed, beside the screenshots
            Files.writeString(screenshots.resolve("console-failed.html"), browser.getPageSource());
            screenshot(browser, screenshots.resolve("console-failed.png"));
            throw e;
        } finally {
            browser.quit();
            settle(summary);
        }
        assertThat(Files.readString(ItServer.log(), StandardCharsets.UTF_8))
                .contains("Ferret console: operator ran skip shard=" + summary)
                .contains("Ferret console: operator ran discard shard=" + summary)
                .contains("Ferret console: operator ran rebuild projection=Dashboard");
    }

    /**
     * Leaves the shard as the other test classes expect it, whatever happened above: running, with no dead letters
     * (the sample WAR is deployed again by them, on the same database).
     */
    private void settle(String shard) throws Exception {
        HttpClient operator = client();
        JsonObject status = json(send(operator, HttpRequest.newBuilder(console("api/status")).GET(), OPERATOR,
                OPERATOR_PASSWORD));
        String token = status.getJsonObject("session").getString("csrfToken");
        if ("PAUSED".equals(shardState(operator, shard))) {
            send(operator, HttpRequest.newBuilder(console("api/skip?shard=" + shard)).header("X-Ferret-CSRF", token)
                    .POST(HttpRequest.BodyPublishers.noBody()), OPERATOR, OPERATOR_PASSWORD);
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (!"RUNNING".equals(shardState(operator, shard)) && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
        }
        JsonArray dead = json(send(operator, HttpRequest.newBuilder(console("api/dead-letters?limit=200&shard="
                + shard)).GET(), OPERATOR, OPERATOR_PASSWORD)).getJsonArray("deadLetters");
        for (JsonObject letter : dead.getValuesAs(JsonObject.class)) {
            send(operator, HttpRequest.newBuilder(console("api/discard?shard=" + shard + "&id="
                    + letter.getJsonNumber("id").longValue())).header("X-Ferret-CSRF", token)
                    .POST(HttpRequest.BodyPublishers.noBody()), OPERATOR, OPERATOR_PASSWORD);
        }
    }

    private void post(HttpClient client, String path, String body) throws Exception {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(base.toURI().resolve(path))
                .timeout(PATIENCE).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("POST %s: %s", path, response.body()).isEqualTo(202);
    }

    private static Set<String> rowNames(WebDriver browser) {
        Set<String> names = new TreeSet<>();
        for (WebElement row : browser.findElements(By.cssSelector("tr.shard"))) {
            names.add(row.getAttribute("data-shard"));
        }
        return names;
    }

    /** Clicks the element once it is there; the page redraws its tables every 2 s, so a stale one is found again. */
    private static void click(WebDriverWait wait, String css) {
        wait.until((Function<WebDriver, Boolean>) d -> {
            d.findElement(By.cssSelector(css)).click();
            return true;
        });
    }

    private static void screenshot(WebDriver browser, Path file) throws IOException {
        Files.write(file, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }
}
