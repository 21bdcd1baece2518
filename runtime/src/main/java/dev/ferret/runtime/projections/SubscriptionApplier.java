package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Hands each page to a {@link SubscriptionBase}; its post-commit listener is kept for after the commit. The
 * subscription owns the whole page, so an event it marks bad is reported once however often it is marked, but its
 * writes cannot be told apart from the page's: taking them back is the subscription's business.
 */
final class SubscriptionApplier implements ProjectionApplier {

    private final SubscriptionBase subscription;
    /** Null: every type. */
    private final Set<String> aliases;

    SubscriptionApplier(SubscriptionBase subscription, FerretDocumentStore store) {
        this.subscription = subscription;
        if (subscription.includedTypes().isEmpty()) {
            this.aliases = null;
        } else {
            Set<String> wanted = new HashSet<>();
            subscription.includedTypes().forEach(type -> wanted.add(store.eventTypes().aliasOf(type)));
            this.aliases = wanted;
        }
    }

    @Override
    public String name() {
        return subscription.name();
    }

    @Override
    public Set<Class<?>> documentTypes() {
        return Set.of();
    }

    @Override
    public boolean startsFromPresent() {
        return subscription.isSubscribeFromPresent();
    }

    @Override
    public boolean wants(String alias) {
        return aliases == null || aliases.contains(alias);
    }

    @Override
    public void apply(List<EventEnvelope> events, PageBatch batch, ApplyErrorHandler errors) throws SQLException {
        try {
            applyPage(0, 0, events, batch, errors, subscription.name() + ":All", () -> false);
        } catch (SQLException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs the subscription on one page inside the page's transaction. */
    @Override
    public void applyPage(long floor, long ceiling, List<EventEnvelope> events, PageBatch batch,
                          ApplyErrorHandler errors, String shardName, Cancellation cancellation) throws Exception {
        Set<UUID> markedBad = new HashSet<>();
        SubscriptionController controller = new SubscriptionController() {
            @Override
            public String shardName() {
                return shardName;
            }

            @Override
            public void markBad(EventEnvelope event, Throwable error) {
                if (!markedBad.add(event.eventId())) {
                    return; // one dead letter per event
                }
                errors.onApplyError(event, error instanceof RuntimeException runtime ? runtime
                        : new IllegalStateException(error));
            }

            @Override
            public DocumentOperations operationsFor(String tenantId) {
                return batch.operations(tenantId);
            }
        };
        PostCommitListener listener = subscription.processEvents(new EventPage(floor, ceiling, events), controller,
                batch.operations(StoreOptions.DEFAULT_TENANT), cancellation);
        batch.afterCommit(listener);
    }
}
