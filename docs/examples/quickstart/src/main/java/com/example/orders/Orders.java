package com.example.orders;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;

@Path("/orders")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class Orders {

    @ApplicationPath("/api")
    public static class Api extends Application {
    }

    @Inject
    DocumentStore store;

    @POST
    @Path("{id}/{customer}/{amountCents}")
    public void place(@PathParam("id") String id, @PathParam("customer") String customer,
                      @PathParam("amountCents") long amountCents) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(id, 0, new OrderPlaced(customer, amountCents));   // 0: a new stream
            session.saveChanges();                             // joins the caller's JTA transaction, if any
        }
    }

    @GET
    @Path("{id}")
    public OrderSummary summary(@PathParam("id") String id) {
        return store.querySession().load(OrderSummary.class, id).orElseThrow(NotFoundException::new);
    }
}
