package dev.ferret.sample;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentQuery;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StreamForWriting;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.sample.Events.ItemAdded;
import dev.ferret.sample.Events.OrderCancelled;
import dev.ferret.sample.Events.OrderPlaced;
import dev.ferret.sample.Events.OrderShipped;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Appends order events and reads the projections; {@code ?nonStale=true} waits for the daemon to catch up. */
@Path("/")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class OrdersResource {

    private static final Duration NON_STALE_WAIT = Duration.ofSeconds(10);

    @Inject
    DocumentStore store;

    public record PlaceOrder(String orderId, String customer, long amountCents) {
    }

    public record AddItem(String sku, int quantity, long priceCents) {
    }

    public record Cancel(String reason) {
    }

    @POST
    @Path("orders")
    public Response place(PlaceOrder order) {
        if (order == null || order.orderId() == null || order.customer() == null) {
            return Response.status(400).entity(Map.of("error", "orderId and customer are required")).build();
        }
        return append(order.orderId(), new OrderPlaced(order.orderId(), order.customer(), order.amountCents()));
    }

    @POST
    @Path("orders/{id}/items")
    public Response addItem(@PathParam("id") String id, AddItem item) {
        return append(id, new ItemAdded(id, item.sku(), item.quantity(), item.priceCents()));
    }

    /** A command handler: the order's state decides, and the append expects the version that state was read at. */
    @POST
    @Path("orders/{id}/ship")
    public Response ship(@PathParam("id") String id) {
        try (DocumentSession session = store.openSession()) {
            StreamForWriting<OrderSummary> order = session.fetchForWriting(OrderSummary.class, id);
            if (order.aggregate().isEmpty()) {
                return Response.status(404).entity(Map.of("error", "no order '" + id + "'")).build();
            }
            String status = order.aggregate().get().status();
            if (!"placed".equals(status)) {
                return Response.status(409).entity(Map.of("error", "order '" + id + "' is " + status)).build();
            }
            order.append(new OrderShipped(id));
            session.saveChanges();
            return Response.accepted(Map.of("stream", id, "event", "OrderShipped", "version", order.version() + 1))
                    .build();
        } catch (ConcurrencyException e) {
            return Response.status(409).entity(Map.of("error", e.getMessage())).build();
        }
    }

    /** The order folded from its events now, without waiting for the daemon's projection. */
    @GET
    @Path("orders/{id}/live")
    public Response liveOrder(@PathParam("id") String id) {
        try (QuerySession session = store.querySession()) {
            return session.aggregateStream(OrderSummary.class, id).map(o -> Response.ok(o).build())
                    .orElseGet(() -> Response.status(404).entity(Map.of("error", "no order '" + id + "'")).build());
        }
    }

    @POST
    @Path("orders/{id}/cancel")
    public Response cancel(@PathParam("id") String id, Cancel cancel) {
        return append(id, new OrderCancelled(id, cancel == null ? null : cancel.reason()));
    }

    private Response append(String streamId, Object event) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(streamId, event);
            session.saveChanges();
        }
        return Response.accepted(Map.of("stream", streamId, "event", event.getClass().getSimpleName())).build();
    }

    @GET
    @Path("orders/{id}")
    public Response order(@PathParam("id") String id, @QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        return read(OrderSummary.class, id, nonStale);
    }

    /**
     * Orders with {@code status}, largest total first, {@code limit} per page: pass the last id of a page as
     * {@code after} for the next one (keyset paging, through the index on status and total).
     */
    @GET
    @Path("orders")
    public Response orders(@QueryParam("status") @DefaultValue("placed") String status,
                           @QueryParam("limit") @DefaultValue("20") int limit,
                           @QueryParam("after") String after,
                           @QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        try (QuerySession session = store.querySession()) {
            int size = Math.max(1, Math.min(limit, 100));
            DocumentQuery<OrderSummary> query = session.query(OrderSummary.class).where("status", status)
                    .orderByDescending("totalCents").limit(size);
            if (nonStale) {
                query.queryForNonStaleData(NON_STALE_WAIT);
            }
            if (after != null) {
                Optional<OrderSummary> last = session.load(OrderSummary.class, after);
                if (last.isEmpty()) {
                    return Response.status(404).entity(Map.of("error", "no order '" + after + "' to page after"))
                            .build();
                }
                query.startAfter(last.get());
            }
            List<OrderSummary> page = query.toList();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("orders", page);
            body.put("next", page.size() < size ? null : page.get(page.size() - 1).id());
            return Response.ok(body).build();
        } catch (NonStaleTimeoutException e) {
            return Response.status(503).entity(Map.of("error", e.getMessage())).build();
        }
    }

    @GET
    @Path("customers/{id}")
    public Response customer(@PathParam("id") String id,
                             @QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        return read(CustomerOrders.class, id, nonStale);
    }

    @GET
    @Path("dashboard")
    public Response dashboard(@QueryParam("nonStale") @DefaultValue("false") boolean nonStale) {
        return read(Dashboard.class, Dashboard.ID, nonStale);
    }

    private <T> Response read(Class<T> type, String id, boolean nonStale) {
        try {
            if (nonStale) {
                store.waitForNonStaleProjectionData(NON_STALE_WAIT);
            }
            try (QuerySession session = store.querySession()) {
                Optional<T> found = session.load(type, id);
                return found.map(d -> Response.ok(d).build())
                        .orElseGet(() -> Response.status(404).entity(Map.of("error", "no " + type.getSimpleName()
                                + " '" + id + "' (yet)")).build());
            }
        } catch (NonStaleTimeoutException e) {
            return Response.status(503).entity(Map.of("error", e.getMessage())).build();
        } catch (IllegalStateException e) {
            return Response.status(409).entity(Map.of("error", e.getMessage())).build();
        }
    }
}
