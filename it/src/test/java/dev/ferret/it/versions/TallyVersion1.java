package dev.ferret.it.versions;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** The first deploy's projection: counts ticks. */
@ApplicationScoped
public class TallyVersion1 {

    @Produces
    @AsyncProjection
    Snapshot<Tally> tally() {
        return Snapshot.of("Tally", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1))
                .apply(Tick.class, (tally, e) -> new Tally(tally.id(), tally.value() + 1));
    }
}
