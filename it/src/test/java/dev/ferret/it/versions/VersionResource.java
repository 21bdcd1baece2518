package dev.ferret.it.versions;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ShardStatus;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** What VersionSwitchIT drives: ticks appended, tallies read, which version serves reads, the gate. */
@Path("/")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class VersionResource {

    @ApplicationPath("/api")
    public static class App extends Application {
    }

    @Inject
    DocumentStore store;

    @POST
    @Path("ticks/{id}")
    public Response tick(@PathParam("id") String id, @QueryParam("count") @DefaultValue("1") int count) {
        try (DocumentSession session = store.openSession()) {
            for (int i = 1; i <= count; i++) {
                session.events().append(id, new Tick(i));
            }
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    @GET
    @Path("tallies/{id}")
    public Response tally(@PathParam("id") String id, @QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        if (nonStale) {
            store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
        }
        try (QuerySession session = store.querySession()) {
            return session.load(Tally.class, id).map(t -> Response.ok(t).build())
                    .orElse(Response.status(404).build());
        }
    }

    /** The version whose tables serve reads of tallies, and each Tally shard's {@code servesReads}. */
    @GET
    @Path("reads")
    public Map<String, Object> reads() {
        Map<String, Object> reads = new LinkedHashMap<>();
        reads.put("version", store.readVersion(Tally.class, StoreOptions.DEFAULT_TENANT));
        Map<String, Boolean> shards = new LinkedHashMap<>();
        for (ShardStatus shard : store.daemon().status().shards()) {
            if (shard.projection().equals("Tally")) {
                shards.put(shard.name(), shard.servesReads());
            }
        }
        reads.put("shards", shards);
        return reads;
    }

    @POST
    @Path("gate")
    public Response openGate() {
        VersionGate.open();
        return Response.accepted().build();
    }
}
