package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Projection;
import dev.ferret.runtime.FerretDocumentStore;
import java.sql.SQLException;
import java.util.List;

/** Folds a page of events into a {@link PageBatch}; one per projection, built once at startup. */
public interface ProjectionApplier {

    /** What happens to an event whose apply threw: rethrow to fail the page, or record it and return. */
    @FunctionalInterface
    interface ApplyErrorHandler {
        void onApplyError(EventEnvelope event, RuntimeException error);
    }

    Projection projection();

    /** Whether this projection can use an event stored under {@code alias}; others are not even deserialized. */
    boolean wants(String alias);

    void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException;

    static ProjectionApplier of(Projection projection, FerretDocumentStore store) {
        if (projection instanceof AggregateProjection<?, ?> aggregate) {
            return new AggregateApplier<>(aggregate, store);
        }
        return new EventProjectionApplier((EventProjection) projection);
    }
}
