package dev.ferret.runtime.projections;

import dev.ferret.projections.Projection;
import java.util.Set;

/** An applier whose shard identity and documents are those of a {@link Projection}. */
abstract class ProjectionBackedApplier implements ProjectionApplier {

    private final Projection projection;

    ProjectionBackedApplier(Projection projection) {
        this.projection = projection;
    }

    @Override
    public final String name() {
        return projection.name();
    }

    @Override
    public final int version() {
        return projection.version();
    }

    @Override
    public final boolean gatesSideEffects() {
        return projection.version() > 1 && projection.isGateSideEffectsBehindPriorVersion();
    }

    @Override
    public boolean sharesTransactions() {
        return ownsItsDocuments() && !projection.isOwnTransaction();
    }

    @Override
    public final Set<Class<?>> documentTypes() {
        return projection.documentTypes();
    }
}
