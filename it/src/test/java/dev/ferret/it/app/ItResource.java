package dev.ferret.it.app;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.daemon.DaemonStatus;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

@Path("/")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class ItResource {

    @ApplicationPath("/api")
    public static class App extends Application {
    }

    @Inject
    DocumentStore store;

    @POST
    @Path("orders/{id}")
    public Response place(@PathParam("id") String id, @QueryParam("customer") String customer) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(id, new ItEvents.Placed(id, customer));
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    @POST
    @Path("poison/{id}")
    public Response poison(@PathParam("id") String id) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(id, new ItEvents.Poison(id));
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    @GET
    @Path("orders/{id}")
    public Response order(@PathParam("id") String id, @QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        if (nonStale) {
            store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
        }
        try (QuerySession session = store.querySession()) {
            return session.load(ItOrder.class, id).map(o -> Response.ok(o).build())
                    .orElse(Response.status(404).build());
        }
    }

    /** The streams of the events appended with {@code correlationId}, in sequence order. */
    @GET
    @Path("correlated/{correlationId}")
    public List<String> correlated(@PathParam("correlationId") String correlationId) {
        try (QuerySession session = store.querySession()) {
            return session.fetchByCorrelationId(correlationId).stream().map(EventEnvelope::streamId).toList();
        }
    }

    /** The stage-2 document of the {@code customers} composite. */
    @GET
    @Path("tiers/{customer}")
    public Response tier(@PathParam("customer") String customer) {
        store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
        try (QuerySession session = store.querySession()) {
            return session.load(ItTier.class, customer).map(t -> Response.ok(t).build())
                    .orElse(Response.status(404).build());
        }
    }

    @GET
    @Path("status")
    public Map<String, Object> status() {
        DaemonStatus status = store.daemon().status();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("mode", status.mode().name());
        result.put("running", status.running());
        Map<String, String> shards = new LinkedHashMap<>();
        status.shards().forEach(s -> shards.put(s.name(), s.state().name()));
        result.put("shards", shards);
        return result;
    }

    /** Threads named after Ferret, or running Ferret daemon code right now. */
    @GET
    @Path("threads")
    public List<String> threads() {
        List<String> found = new ArrayList<>();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            boolean daemonCode = Arrays.stream(e.getValue())
                    .anyMatch(f -> f.getClassName().startsWith("dev.ferret.runtime.daemon."));
            if (e.getKey().getName().toLowerCase().contains("ferret") || daemonCode) {
                found.add(e.getKey().getName());
            }
        }
        return found;
    }
}
