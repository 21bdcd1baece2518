package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.EventProjection;
import java.util.List;

/** Hands every event to the user's {@link EventProjection#apply}. */
final class EventProjectionApplier extends ProjectionBackedApplier {

    private final EventProjection projection;

    EventProjectionApplier(EventProjection projection) {
        super(projection);
        this.projection = projection;
    }


    @Override
    public boolean wants(String alias) {
        return true;
    }

    @Override
    public void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) {
        for (EventEnvelope event : events) {
            try {
                projection.apply(event, batch.operations(event.tenantId()));
                projection.raiseSideEffects(event, batch.sideEffects(event.tenantId()));
            } catch (PageBatch.PageReadException e) {
                throw e;
            } catch (RuntimeException e) {
                errors.onApplyError(event, e);
            }
        }
    }
}
