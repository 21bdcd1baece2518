package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Hands each page to a {@link SubscriptionBase}; its post-commit listener is kept for after the commit. The
 * subscription owns the whole page, so an event it marks bad is reported once however often it is marked, but its
 * writes cannot be told apart from the page's: taking them back is the subscription's business.
 */
final class SubscriptionApplier implements ProjectionApplier {

    private final SubscriptionBase subscription;
    private final TenantDatabases databases;
    /** Null: every type. */
    private final Set<String> aliases;

    SubscriptionApplier(SubscriptionBase subscription, StoreContext context) {
        this.subscription = subscription;
        this.databases = context.databases();
        if (subscription.includedTypes().isEmpty()) {
            this.aliases = null;
        } else {
            Set<String> wanted = new HashSet<>();
            subscription.includedTypes().forEach(type -> wanted.add(context.eventTypes().aliasOf(type)));
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

    /**
     * Runs the subscription on one page inside the page's transaction, then settles every event it marked bad,
     * whatever it did with the exception {@code markBad} threw: a mark the handler did not take (no
     * {@code skipApplyErrors}) fails the page naming that event, so a subscription that catches the exception can
     * neither commit the page nor advance past the event.
     */
    @Override
    public void applyPage(long floor, long ceiling, List<EventEnvelope> events, PageBatch batch,
                          ApplyErrorHandler errors, String shardName, Cancellation cancellation) throws Exception {
        Marks marks = new Marks(events, errors);
        TenantDatabases.Database pageDatabase = batch.database();
        SubscriptionController controller = new SubscriptionController() {
            @Override
            public String shardName() {
                return shardName;
            }

            @Override
            public void markBad(EventEnvelope event, Throwable error) {
                marks.mark(event, error);
            }

            @Override
            public DocumentOperations operationsFor(String tenantId) {
                requireHeld(pageDatabase, tenantId, shardName);
                return batch.operations(tenantId);
            }
        };
        PostCommitListener listener;
        try {
            listener = subscription.processEvents(new EventPage(floor, ceiling, events), controller,
                    operations(batch, pageDatabase, shardName), cancellation);
        } catch (Exception | Error e) {
            marks.settleAfterFailure(e);
            throw e;
        }
        marks.settle();
        batch.afterCommit(listener);
    }

    /**
     * Refuses a tenant that lives in another database than the page: the page's transaction writes only to its
     * own, and the tenant's sessions would never see what it wrote.
     */
    private void requireHeld(TenantDatabases.Database pageDatabase, String tenantId, String shardName) {
        Objects.requireNonNull(tenantId, "tenantId");
        if (!databases.holds(pageDatabase, tenantId)) {
            throw new IllegalStateException("subscription shard '" + shardName + "' cannot write documents of"
                    + " tenant '" + tenantId + "': the tenant lives in database '" + databases.of(tenantId).name()
                    + "' and the page's transaction is in database '" + pageDatabase.name() + "'; write to a"
                    + " tenant of the page's database (such as the page's own: controller.operationsFor("
                    + "event.tenantId())), or do it after the commit in the PostCommitListener with a session of"
                    + " that tenant");
        }
    }

    /**
     * The default tenant's operations for {@code processEvents}: the page's, when the default tenant lives in the
     * page's database; otherwise operations that refuse every call, so a page of a tenant in another database
     * runs as long as it does not use them.
     */
    private DocumentOperations operations(PageBatch batch, TenantDatabases.Database pageDatabase, String shardName) {
        if (databases.holds(pageDatabase, StoreOptions.DEFAULT_TENANT)) {
            return batch.operations(StoreOptions.DEFAULT_TENANT);
        }
        return new DocumentOperations() {
            @Override
            public String tenantId() {
                return StoreOptions.DEFAULT_TENANT;
            }

            @Override
            public <T> Optional<T> load(Class<T> type, Object id) {
                requireHeld(pageDatabase, StoreOptions.DEFAULT_TENANT, shardName);
                throw new AssertionError("unreachable");
            }

            @Override
            public void store(Object document) {
                requireHeld(pageDatabase, StoreOptions.DEFAULT_TENANT, shardName);
            }

            @Override
            public void delete(Class<?> type, Object id) {
                requireHeld(pageDatabase, StoreOptions.DEFAULT_TENANT, shardName);
            }
        };
    }

    /**
     * The events marked bad on one page, in marking order. A mark the handler took (it recorded a dead letter and
     * returned) is settled; one it refused (it threw) stays open until {@link #settle} throws it again.
     */
    private static final class Marks {

        private final Set<UUID> onPage = new HashSet<>();
        private final ApplyErrorHandler errors;
        private final Map<UUID, Mark> marks = new LinkedHashMap<>();

        private record Mark(EventEnvelope event, RuntimeException error, boolean taken) {
        }

        Marks(List<EventEnvelope> events, ApplyErrorHandler errors) {
            events.forEach(event -> onPage.add(event.eventId()));
            this.errors = errors;
        }

        void mark(EventEnvelope event, Throwable error) {
            Objects.requireNonNull(event, "event");
            if (!onPage.contains(event.eventId())) {
                throw new IllegalArgumentException("markBad: event " + event.eventId() + " (" + event.typeName()
                        + " at sequence " + event.sequence() + ") is not on this page");
            }
            if (marks.containsKey(event.eventId())) {
                Mark earlier = marks.get(event.eventId());
                if (!earlier.taken()) {
                    errors.onApplyError(earlier.event(), earlier.error()); // one dead letter per event
                }
                return;
            }
            RuntimeException runtime = error instanceof RuntimeException r ? r
                    : new IllegalStateException(error == null ? "marked bad" : error.toString(), error);
            marks.put(event.eventId(), new Mark(event, runtime, false));
            // with skipApplyErrors the handler records the dead letter and returns; without, it throws, which
            // stops the subscription's loop early, and the open mark fails the page even if that throw is caught
            errors.onApplyError(event, runtime);
            marks.put(event.eventId(), new Mark(event, runtime, true));
        }

        /** Fails the page on the first mark the handler refused. */
        void settle() {
            for (Mark mark : marks.values()) {
                if (!mark.taken()) {
                    errors.onApplyError(mark.event(), mark.error());
                }
            }
        }

        /**
         * The subscription threw {@code failure}. Unless that is the refusal of a mark (it let markBad's exception
         * through), an open mark fails the page in its place, naming the event, with {@code failure} suppressed.
         */
        void settleAfterFailure(Throwable failure) {
            if (failure instanceof ApplyFailedException) {
                return;
            }
            try {
                settle();
            } catch (RuntimeException marked) {
                marked.addSuppressed(failure);
                throw marked;
            }
        }
    }
}
