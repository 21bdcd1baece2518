package dev.ferret.it.app;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.StreamState;
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
import java.util.concurrent.CountDownLatch;

@Path("/")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class ItResource {

    @ApplicationPath("/api")
    public static class App extends Application {
    }

    @Inject
    DocumentStore store;

    @Inject
    ItAnnouncements announcements;

    @Inject
    ItLedger ledger;

    /** An order placed in the caller's JTA transaction with a ledger row: both commit, or both roll back. */
    @POST
    @Path("ledger/{id}")
    public Response ledger(@PathParam("id") String id, @QueryParam("fail") @DefaultValue("false") boolean fail,
                           @QueryParam("hold") @DefaultValue("false") boolean hold) throws Exception {
        ledger.createTable();
        try {
            ledger.record(id, fail, hold);
        } catch (IllegalStateException e) {
            return Response.status(409).entity("\"rolled back\"").build();
        }
        return Response.accepted().build();
    }

    /** Whether the held transaction of {@code id} has appended (it stays open until released). */
    @GET
    @Path("ledger/{id}/appended")
    public boolean ledgerAppended(@PathParam("id") String id) {
        CountDownLatch appended = ItLedger.APPENDED.get(id);
        return appended != null && appended.getCount() == 0;
    }

    @POST
    @Path("ledger/{id}/release")
    public Response releaseLedger(@PathParam("id") String id) {
        ItLedger.RELEASE.computeIfAbsent(id, k -> new CountDownLatch(1)).countDown();
        return Response.accepted().build();
    }

    /** The ledger rows and the events of stream {@code id}, as committed. */
    @GET
    @Path("ledger/{id}")
    public Map<String, Object> ledgerState(@PathParam("id") String id) throws Exception {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("ledgerRows", ledger.ledgerRows(id));
        state.put("events", store.querySession().fetchStream(id).size());
        return state;
    }

    /** What the application's observers received of the outbox, and whether its options hook ran. */
    @GET
    @Path("announcements")
    public Map<String, Object> announcements() {
        Map<String, Object> seen = new LinkedHashMap<>();
        seen.put("configured", announcements.configured());
        seen.put("commitsSeen", announcements.commitsSeen());
        seen.put("messageIds", announcements.messageIds().size());
        seen.put("orders", new ArrayList<>(announcements.announcedOrders()));
        return seen;
    }

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
    @Path("notes/{id}")
    public Response note(@PathParam("id") String id, @QueryParam("text") String text) {
        try (DocumentSession session = store.openSession()) {
            session.events().append("note-" + id, new ItEvents.Noted(id, text));
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    /** Holds a shard, so that events appended meanwhile are left to the next deployment. */
    @POST
    @Path("hold/{shard}")
    public Response hold(@PathParam("shard") String shard) {
        store.daemon().hold(shard);
        return Response.accepted().build();
    }

    @GET
    @Path("notes/{id}")
    public Response noteOf(@PathParam("id") String id) {
        try (QuerySession session = store.querySession()) {
            return session.load(ItNote.class, id).map(n -> Response.ok(n).build())
                    .orElse(Response.status(404).build());
        }
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

    /** Archives a stream, or brings it back ({@code back}), in a unit of work of its own. */
    @POST
    @Path("streams/{id}/archive")
    public Response archive(@PathParam("id") String id, @QueryParam("back") @DefaultValue("false") boolean back) {
        try (DocumentSession session = store.openSession()) {
            if (back) {
                session.events().unarchiveStream(id);
            } else {
                session.events().archiveStream(id);
            }
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    /** Compacts an order's stream through {@code through}, folded by the ItOrder snapshot. */
    @POST
    @Path("streams/{id}/compact")
    public Response compact(@PathParam("id") String id, @QueryParam("through") long through) {
        try (DocumentSession session = store.openSession()) {
            session.events().compactStream(ItOrder.class, id, through);
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    /** A stream's live versions, all its versions (archived too), its archived mark and its order folded live. */
    @GET
    @Path("streams/{id}")
    public Map<String, Object> stream(@PathParam("id") String id) {
        try (QuerySession session = store.querySession()) {
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("live", session.fetchStream(id).stream().map(EventEnvelope::version).toList());
            result.put("all", session.fetchStream(id, true).stream().map(EventEnvelope::version).toList());
            result.put("archived", session.fetchStreamState(id).map(StreamState::archived).orElse(false));
            result.put("customer", session.aggregateStream(ItOrder.class, id).map(ItOrder::customer).orElse("none"));
            return result;
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
