package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.EventProjection;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Hands every event to the user's {@link EventProjection#apply}. An event that throws is taken back from the page
 * whole (see {@link PageBatch#beginEvent}) and reported once. When it was handed documents that earlier events of
 * the page wrote, it may have changed them in place before it threw; then the page is applied again from its start
 * without it, as a transient retry would (projections are deterministic). That costs a failed event, never a good
 * one: nothing is copied on the way.
 */
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
    public void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException {
        Set<Integer> failed = new HashSet<>();
        int i = 0;
        while (i < events.size()) {
            if (failed.contains(i)) {
                i++;
                continue;
            }
            EventEnvelope event = events.get(i);
            batch.beginEvent();
            try {
                projection.apply(event, batch.operations(event.tenantId()));
                projection.raiseSideEffects(event, batch.sideEffects(event));
            } catch (PageBatch.PageReadException e) {
                throw e;
            } catch (RuntimeException e) {
                boolean tainted = batch.discardEvent();
                failed.add(i);
                errors.onApplyError(event, e);
                if (tainted) {
                    batch.restart();
                    i = 0;
                } else {
                    i++;
                }
                continue;
            }
            batch.keepEvent();
            i++;
        }
    }
}
