package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.concurrent.CompletableFuture;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.EmptyAsset;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.importer.ZipImporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * What differs between the two servers the suite runs on, read from the system properties each failsafe execution
 * sets ({@code it.server}, {@code it.http.port}, {@code it.health.base}, {@code it.server.log}, {@code it.extra.config}),
 * and the HTTP and archive helpers the test classes share.
 */
final class ItServer {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(90);

    private ItServer() {
    }

    /** {@code liberty} or {@code wildfly}. */
    static String name() {
        return required("it.server");
    }

    static String httpBase() {
        return "http://localhost:" + required("it.http.port");
    }

    static String healthBase() {
        return required("it.health.base");
    }

    static Path log() {
        return Path.of(required("it.server.log"));
    }

    /**
     * A test WAR: the given MicroProfile Config lines (plus this server's own, such as WildFly's long-running
     * executor) and the jars every test WAR bundles.
     */
    static WebArchive war(String name, String config) {
        String all = config + System.getProperty("it.extra.config", "") + "\n";
        WebArchive war = ShrinkWrap.create(WebArchive.class, name + ".war")
                .addAsWebInfResource(EmptyAsset.INSTANCE, "beans.xml")
                .addAsResource(new StringAsset(all), "META-INF/microprofile-config.properties");
        File[] libs = new File(required("it.war.libs")).listFiles();
        assertThat(libs).as("jars from target/war-libs").isNotEmpty();
        war.addAsLibraries(libs);
        return war;
    }

    /**
     * The liberty-sample WAR as built (copied by maven-dependency-plugin), deployed as {@code ferret.war}: at
     * {@code /ferret} on Liberty, and on WildFly through its {@code jboss-web.xml}.
     */
    static WebArchive sampleWar() {
        File war = new File(System.getProperty("it.sample.war", "target/sample-war/ferret-liberty-sample.war"));
        assertThat(war).as("the liberty-sample WAR (copied by maven-dependency-plugin)").isFile();
        return ShrinkWrap.create(ZipImporter.class, "ferret.war").importFrom(war).as(WebArchive.class);
    }

    /** The log from byte {@code from} on. */
    static String tail(Path log, long from) throws IOException {
        byte[] all = Files.readAllBytes(log);
        int start = (int) Math.min(from, all.length);
        return new String(all, start, all.length - start, StandardCharsets.UTF_8);
    }

    static long size(Path log) throws IOException {
        return Files.exists(log) ? Files.size(log) : 0;
    }

    static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String url, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(REQUEST_TIMEOUT)
                .POST(HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A POST whose answer is awaited later: for a request the server holds open. */
    static CompletableFuture<HttpResponse<String>> postAsync(String url) {
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create(url)).timeout(REQUEST_TIMEOUT)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    static String required(String key) {
        String value = System.getProperty(key);
        assertThat(value).as("system property %s (set by the failsafe execution in it/pom.xml)", key).isNotBlank();
        return value;
    }
}
