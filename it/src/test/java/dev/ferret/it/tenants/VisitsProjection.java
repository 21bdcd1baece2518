package dev.ferret.it.tenants;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** One shard per tenant: the store's events are partitioned by tenant. */
@ApplicationScoped
public class VisitsProjection {

    @Produces
    @AsyncProjection(name = "Visits")
    Snapshot<Visits> visits() {
        return Snapshot.of(Visits.class)
                .create(Visit.class, (id, e) -> new Visits(id, 1))
                .apply(Visit.class, (doc, e) -> new Visits(doc.id(), doc.count() + 1));
    }
}
