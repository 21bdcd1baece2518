package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Projection;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.SubscriptionBase;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Folds a page of events into a {@link PageBatch}; one per projection, built once at startup. */
public interface ProjectionApplier {

    /** What happens to an event whose apply threw: rethrow to fail the page, or record it and return. */
    @FunctionalInterface
    interface ApplyErrorHandler {
        void onApplyError(EventEnvelope event, RuntimeException error);
    }

    /** The name the shard is keyed by. */
    String name();

    /** The version (1 unless the projection says otherwise). */
    default int version() {
        return 1;
    }

    /** The document types it writes: what a per-query wait waits for and a rebuild tears down. */
    Set<Class<?>> documentTypes();

    /** The tables a rebuild tears down. */
    default List<DocumentMapping<?>> documentMappings(StoreContext context) {
        List<DocumentMapping<?>> mappings = new ArrayList<>();
        documentTypes().forEach(type -> mappings.add(context.mapping(type)));
        return mappings;
    }

    /** Whether side effects wait behind the highest progression of the prior versions (version above 1). */
    default boolean gatesSideEffects() {
        return false;
    }

    /** Whether the shard starts at the current high water mark, ignoring its persisted progression. */
    default boolean startsFromPresent() {
        return false;
    }

    /**
     * Whether the shard is the only writer of the documents it reads, so that what it committed can be kept between
     * pages instead of read back ({@link ShardDocumentCache}): true for a snapshot projection.
     */
    default boolean ownsItsDocuments() {
        return false;
    }

    /**
     * Whether the shard's pages may commit in one transaction with other shards' pages of its database: it must be
     * its documents' only writer (its pages are applied before the shared transaction begins) and its projection
     * must not ask for a transaction of its own.
     */
    default boolean sharesTransactions() {
        return false;
    }

    /**
     * Called at assembly, before any shard runs, when another registration (another projection, or another version
     * of this one writing the same table) writes a table it writes: it is then not its documents' only writer.
     */
    default void sharesItsDocuments() {
    }

    /** Whether this projection can use an event stored under {@code alias}; others are not even deserialized. */
    boolean wants(String alias);

    void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException;

    /**
     * Applies one daemon page of {@code (floor, ceiling]}; a subscription sees the bounds and the shard, a
     * projection only the events.
     */
    default void applyPage(long floor, long ceiling, List<EventEnvelope> events, PageBatch batch,
                           ApplyErrorHandler errors, String shardName,
                           Cancellation cancellation) throws Exception {
        apply(events, batch, errors);
    }

    static ProjectionApplier of(SubscriptionBase subscription, StoreContext context) {
        return new SubscriptionApplier(subscription, context);
    }

    static ProjectionApplier of(Projection projection, StoreContext context) {
        if (projection instanceof AggregateProjection<?, ?> aggregate) {
            return new AggregateApplier<>(aggregate, context);
        }
        if (projection instanceof CompositeProjection composite) {
            return new CompositeApplier(composite, context);
        }
        EventProjection free = (EventProjection) projection;
        // declared types read back after a restart, before this node appends one of them
        free.handledEventTypes().forEach(context.eventTypes()::aliasOf);
        return new EventProjectionApplier(free);
    }
}
