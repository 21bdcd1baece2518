package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.Projection;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Applies one page to every member of a {@link CompositeProjection}, stage by stage, in one {@link PageBatch}: a
 * later member reads what earlier ones left pending, and the page's one transaction commits them all.
 *
 * <p>An event a member cannot apply is reported once and taken back from every member: when a member other than
 * the first reports one, an earlier member may have applied it, so the whole page is applied again from its start
 * without the failed events. A member that would restart the page itself (see {@link EventProjectionApplier})
 * leaves that to the composite, since its own restart would drop the earlier members' work. Each pass adds at least one failed event, so the passes are bounded by the page; a page without failures
 * is applied once. Stateless between pages; used by the shard's thread only.
 */
final class CompositeApplier extends ProjectionBackedApplier {

    /** Every member's applier, stage by stage. */
    private final List<ProjectionApplier> members;

    CompositeApplier(CompositeProjection composite, StoreContext context) {
        super(composite);
        List<ProjectionApplier> all = new ArrayList<>();
        for (Projection member : composite.members()) {
            all.add(ProjectionApplier.of(member, context));
        }
        this.members = List.copyOf(all);
    }

    @Override
    public boolean wants(String alias) {
        return members.stream().anyMatch(m -> m.wants(alias));
    }

    @Override
    public boolean ownsItsDocuments() {
        return members.stream().allMatch(m -> m.ownsItsDocuments());
    }

    @Override
    public boolean sharesTransactions() {
        return super.sharesTransactions() && members.stream().allMatch(ProjectionApplier::sharesTransactions);
    }

    @Override
    public void sharesItsDocuments() {
        members.forEach(ProjectionApplier::sharesItsDocuments);
    }

    @Override
    public List<DocumentMapping<?>> documentMappings(StoreContext context) {
        List<DocumentMapping<?>> mappings = new ArrayList<>();
        for (ProjectionApplier member : members) {
            for (DocumentMapping<?> mapping : member.documentMappings(context)) {
                if (!mappings.contains(mapping)) {
                    mappings.add(mapping);
                }
            }
        }
        return mappings;
    }

    @Override
    public void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException {
        Set<Long> failed = new HashSet<>();
        ApplyErrorHandler once = (event, error) -> {
            if (failed.add(event.sequence())) {
                errors.onApplyError(event, error);
            }
        };
        while (!applyAll(events, batch, failed, once)) {
            batch.restart();
        }
    }

    /** One pass over every member; false when the page must be applied again from its start. */
    private boolean applyAll(List<EventEnvelope> events, PageBatch batch, Set<Long> failed, ApplyErrorHandler once)
            throws SQLException {
        for (int i = 0; i < members.size(); i++) {
            ProjectionApplier applier = members.get(i);
            List<EventEnvelope> wanted = new ArrayList<>(events.size());
            for (EventEnvelope event : events) {
                if (applier.wants(event.typeName()) && !failed.contains(event.sequence())) {
                    wanted.add(event);
                }
            }
            if (wanted.isEmpty()) {
                continue;
            }
            int failedBefore = failed.size();
            batch.leaveRestartsToComposite(true);
            try {
                applier.apply(wanted, batch, once);
            } catch (PageBatch.RestartRequested e) {
                return false;
            } finally {
                batch.leaveRestartsToComposite(false);
            }
            // an earlier member may have applied the failed event: only the page's start is free of it
            if (i > 0 && failed.size() > failedBefore) {
                return false;
            }
        }
        return true;
    }
}
