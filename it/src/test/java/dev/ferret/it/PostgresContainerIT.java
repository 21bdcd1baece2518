package dev.ferret.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.it.pg.MeterProjection;
import dev.ferret.it.pg.MeterResource;
import dev.ferret.it.pg.MeterTotal;
import dev.ferret.it.pg.Reading;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Ferret on PostgreSQL inside the server, through the server's own data source ({@code -Ppostgres} runs it; the
 * local PostgreSQL of the build): the store migrates its schema there, the daemon folds a snapshot whose new
 * documents go through {@code COPY} (the server's connection unwraps to the driver's, whose classes the application
 * shares: Liberty's global library, WildFly's driver deployment named in the WAR's manifest), page commits run
 * without the flush wait, and every id and note comes back whole. The servers' data sources point at
 * 127.0.0.1:5432/test as the build's PostgreSQL (server.xml, postgres-datasource.cli); {@code postgres.url} is this
 * test's own connection, for dropping the schema and counting rows, and must name the same database.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class PostgresContainerIT {

    private static final String SCHEMA = "it_pg_" + System.getProperty("it.server", "server");
    private static final String NOTE = "tab\there, line\nbreak, back\\slash, \\N, \\.";

    @ArquillianResource
    private Deployer deployer;

    @Deployment(name = "pg", managed = false, testable = false)
    static WebArchive war() {
        String config = """
                ferret.datasource=%s
                ferret.schema=%s
                ferret.apply-all-database-changes-on-startup=true
                ferret.daemon.mode=SOLO
                ferret.daemon.polling-interval=PT0.1S
                ferret.daemon.batch-size=2000
                """.formatted(ItServer.required("it.postgres.datasource"), SCHEMA);
        return ItServer.war("ferret-pg", config)
                .addClasses(Reading.class, MeterTotal.class, MeterProjection.class, MeterResource.class,
                        MeterResource.App.class)
                // WildFly: the driver deployment's classes, so that Ferret unwraps to them (Liberty ignores it)
                .setManifest(new StringAsset("Manifest-Version: 1.0\nDependencies: deployment.postgresql.jar\n"));
    }

    private static String api(String path) {
        return ItServer.httpBase() + "/ferret-pg/api/" + path;
    }

    private static Connection postgres() throws SQLException {
        return DriverManager.getConnection(ItServer.required("it.postgres.url"));
    }

    private static void dropSchema() throws SQLException {
        try (Connection c = postgres(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
    }

    private static JsonArray totals(String prefix) throws Exception {
        HttpResponse<String> response = ItServer.get(api("totals?prefix=" + prefix));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        try (JsonReader reader = Json.createReader(new StringReader(response.body()))) {
            return reader.readArray();
        }
    }

    private static void append(String prefix, int meters, int count) throws Exception {
        HttpResponse<String> response = ItServer.post(api("readings?prefix=" + prefix + "&meters=" + meters
                + "&count=" + count + "&note=" + URLEncoder.encode(NOTE, StandardCharsets.UTF_8)));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
    }

    @Test
    void aSnapshotOnTheServersPostgresDataSourceCopiesItsNewDocumentsAndStoresEveryValueWhole() throws Exception {
        dropSchema();
        deployer.deploy("pg");
        try {
            HttpResponse<String> copies = ItServer.get(api("copies"));
            assertThat(copies.body()).as("the server's connection reaches the driver's copy API")
                    .contains("\"product\":\"PostgreSQL\"").contains("\"copies\":true");

            // one page of 1,200 new documents: copied (a page with fewer inserts them with a statement)
            append("m", 1_200, 1);
            JsonArray first = totals("m");
            assertThat(first).hasSize(1_200);
            for (JsonObject total : first.getValuesAs(JsonObject.class)) {
                assertThat(total.getJsonNumber("readings").longValue()).as(total.toString()).isEqualTo(1);
                assertThat(total.getJsonNumber("total").longValue()).isEqualTo(1);
                assertThat(total.getString("lastNote")).isEqualTo(NOTE);
            }

            // the same meters again (found: upserted) and as many new ones (missing: copied)
            append("m", 2_400, 2);
            JsonArray second = totals("m");
            assertThat(second).hasSize(2_400);
            for (JsonObject total : second.getValuesAs(JsonObject.class)) {
                int meter = Integer.parseInt(total.getString("id").substring(2));
                assertThat(total.getJsonNumber("readings").longValue()).as(total.toString())
                        .isEqualTo(meter < 1_200 ? 3 : 2);
                assertThat(total.getJsonNumber("total").longValue()).isEqualTo(meter < 1_200 ? 4 : 3);
            }

            try (Connection c = postgres(); Statement s = c.createStatement();
                 ResultSet rows = s.executeQuery("SELECT count(*), count(DISTINCT id), min(version)"
                         + " FROM " + SCHEMA + ".pc_doc_metertotal")) {
                rows.next();
                assertThat(rows.getLong(1)).as("rows in the document table").isEqualTo(2_400);
                assertThat(rows.getLong(2)).isEqualTo(2_400);
                assertThat(rows.getLong(3)).isEqualTo(1);
            }
        } finally {
            deployer.undeploy("pg");
            dropSchema();
        }
    }
}
