package dev.ferret.it;

import static dev.ferret.it.ItServer.war;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.it.tenants.TenantResource;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonString;
import java.io.StringReader;
import java.net.http.HttpResponse;
import java.util.List;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tenants at run time in the container: the application's {@code TenantResolver} bean places a tenant the
 * configuration does not list at its first use, and a released tenant's shards leave the daemon and come back at its
 * next events, from their progression, while the other tenants' shards go on.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class TenantResolverIT {

    @Deployment(testable = false)
    static WebArchive tenants() {
        return war("ferret-tenants", """
                ferret.schema=it_tenants
                ferret.apply-all-database-changes-on-startup=true
                ferret.events.partition-by-tenant=true
                ferret.daemon.mode=SOLO
                ferret.daemon.polling-interval=PT0.1S
                """).addPackage(TenantResource.class.getPackage());
    }

    private static String api(String path) {
        return ItServer.httpBase() + "/ferret-tenants/api/tenants/" + path;
    }

    private static int count(String tenant) throws Exception {
        HttpResponse<String> response = ItServer.get(api(tenant));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return Integer.parseInt(response.body().trim());
    }

    private static List<String> strings(String body) {
        JsonArray array = Json.createReader(new StringReader(body)).readArray();
        return array.getValuesAs(JsonString.class).stream().map(JsonString::getString).toList();
    }

    private static void visit(String tenant) throws Exception {
        HttpResponse<String> response = ItServer.post(api(tenant + "/visits"));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    }

    @Test
    void theResolverBeanPlacesNewTenantsAndAReleasedTenantComesBackWithItsNextEvents() throws Exception {
        visit("acme");
        visit("acme");
        visit("globex");
        assertThat(count("acme")).isEqualTo(2);
        assertThat(count("globex")).isEqualTo(1);
        assertThat(strings(ItServer.get(api("asked")).body())).contains("acme", "globex");

        HttpResponse<String> released = ItServer.post(api("acme/release"));
        assertThat(released.statusCode()).as(released.body()).isEqualTo(200);
        assertThat(strings(released.body())).containsExactly("Visits:All@acme");

        visit("acme");
        visit("globex");
        assertThat(count("acme")).as("from the progression it had").isEqualTo(3);
        assertThat(count("globex")).isEqualTo(2);
        // forgotten on release, so asked again when it came back
        assertThat(strings(ItServer.get(api("asked")).body()).stream().filter("acme"::equals).count())
                .isGreaterThanOrEqualTo(2);
    }
}
