package dev.ferret.it.pg;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** A snapshot: the only writer of its table, so the documents its pages find missing are inserted (copied). */
@ApplicationScoped
public class MeterProjection {

    @Produces
    @AsyncProjection
    Snapshot<MeterTotal> meters() {
        return Snapshot.of("MeterTotal", MeterTotal.class)
                .create(Reading.class, (id, e) -> new MeterTotal(id, 1, e.value(), e.note()))
                .apply(Reading.class, (m, e) -> new MeterTotal(m.id(), m.readings() + 1, m.total() + e.value(),
                        e.note()));
    }
}
