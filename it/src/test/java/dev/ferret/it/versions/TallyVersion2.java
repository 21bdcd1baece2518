package dev.ferret.it.versions;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.Snapshot;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** The next deploy's projection: version 2 counts ticks in hundreds, and waits at the gate on its first event. */
@ApplicationScoped
public class TallyVersion2 {

    @Produces
    @AsyncProjection(version = 2)
    Snapshot<Tally> tally() {
        return Snapshot.of("Tally", Tally.class)
                .create(Tick.class, (id, e) -> {
                    VersionGate.await();
                    return new Tally(id, 100);
                })
                .apply(Tick.class, (tally, e) -> new Tally(tally.id(), tally.value() + 100))
                .withVersion(2);
    }
}
