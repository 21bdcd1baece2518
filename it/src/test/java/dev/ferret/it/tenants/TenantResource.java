package dev.ferret.it.tenants;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import java.time.Duration;
import java.util.List;

/** Visits per tenant, the resolver's questions, and releasing a tenant, over HTTP. */
@Path("/tenants")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class TenantResource {

    @ApplicationPath("/api")
    public static class App extends Application {
    }

    @Inject
    DocumentStore store;

    @Inject
    RecordingResolver resolver;

    @POST
    @Path("{tenant}/visits")
    public int visit(@PathParam("tenant") String tenant) {
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append("site", new Visit("/"));
            session.saveChanges();
        }
        return 1;
    }

    @GET
    @Path("{tenant}")
    public int visits(@PathParam("tenant") String tenant) {
        store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
        try (QuerySession session = store.querySession(tenant)) {
            return session.load(Visits.class, "site").map(Visits::count).orElse(0);
        }
    }

    @GET
    @Path("asked")
    public List<String> asked() {
        return resolver.asked();
    }

    @POST
    @Path("{tenant}/release")
    public List<String> release(@PathParam("tenant") String tenant) {
        return store.daemon().releaseTenant(tenant, Duration.ofSeconds(30), () -> { });
    }
}
