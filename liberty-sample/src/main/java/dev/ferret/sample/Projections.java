package dev.ferret.sample;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.Snapshot;
import dev.ferret.sample.Events.ItemAdded;
import dev.ferret.sample.Events.OrderCancelled;
import dev.ferret.sample.Events.OrderPlaced;
import dev.ferret.sample.Events.OrderShipped;
import dev.ferret.StoreOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.util.List;

/** The builder-style projections, as producer methods: Snapshot and MultiStreamProjection are final classes. */
@ApplicationScoped
public class Projections {

    @Produces
    @AsyncProjection
    Snapshot<OrderSummary> orderSummary() {
        return Snapshot.of(OrderSummary.class)
                .create(OrderPlaced.class, (id, e) -> new OrderSummary(id, e.customer(), 0, e.amountCents(), "placed"))
                .apply(ItemAdded.class, (doc, e) -> doc.withItem(e.quantity(), e.priceCents()))
                .apply(OrderShipped.class, (doc, e) -> doc.withStatus("shipped"))
                .apply(OrderCancelled.class, (doc, e) -> doc.withStatus("cancelled"));
    }

    /** Orders are listed by status, largest first: both properties are indexed. */
    @Produces
    StoreOptions.DocumentIndex ordersByStatusAndTotal() {
        return new StoreOptions.DocumentIndex(OrderSummary.class, List.of("status", "totalCents"), false);
    }

    @Produces
    @AsyncProjection(name = "Dashboard")
    MultiStreamProjection<Dashboard> dashboard() {
        return MultiStreamProjection.of(Dashboard.class)
                .identity(OrderPlaced.class, e -> Dashboard.ID)
                .identity(OrderShipped.class, e -> Dashboard.ID)
                .identity(OrderCancelled.class, e -> Dashboard.ID)
                .create(OrderPlaced.class, (id, e) -> new Dashboard(id, 0, 0, 0, 0).withPlaced(e.amountCents()))
                .apply(OrderPlaced.class, (doc, e) -> doc.withPlaced(e.amountCents()))
                .apply(OrderShipped.class, (doc, e) -> doc.withShipped())
                .apply(OrderCancelled.class, (doc, e) -> doc.withCancelled());
    }
}
