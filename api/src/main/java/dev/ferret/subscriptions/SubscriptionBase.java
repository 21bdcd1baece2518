package dev.ferret.subscriptions;

import dev.ferret.projections.DocumentOperations;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Extend this for a subscription. Its name (default: the simple class name; set one explicitly if the type may be
 * renamed) keys its progression as {@code <name>:All}. Writes through the supplied operations commit with the page's
 * progression row, or not at all; anything that reaches outside the database is at-least-once, so make it
 * idempotent or do it in the returned {@link PostCommitListener}.
 */
public abstract class SubscriptionBase {

    private String name = getClass().getSimpleName();
    private final Set<Class<?>> includedTypes = new LinkedHashSet<>();
    private boolean fromPresent;

    /**
     * Processes one page; called in sequence order, one page at a time.
     *
     * @param page         the events, already filtered by {@link #includeType}
     * @param controller   the shard: poison events, other tenants
     * @param operations   document operations for the default tenant, in the page's transaction; on a page of a
     *                     tenant in another database than the default tenant's, every call on them throws
     *                     {@link IllegalStateException} (use {@code controller.operationsFor(tenant)})
     * @param cancellation whether the shard is stopping
     * @return what to do after the page commits, or {@link PostCommitListener#NONE}
     * @throws Exception fails the page: it rolls back and the shard pauses (transient database errors are retried)
     */
    public abstract PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                     DocumentOperations operations, Cancellation cancellation)
            throws Exception;

    public final String name() {
        return name;
    }

    /** Names the subscription; its progression is keyed by this name. */
    public final SubscriptionBase name(String name) {
        if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_.-]{0,199}")) {
            throw new IllegalArgumentException("subscription name must be 1-200 letters, digits, '_', '.' or '-'"
                    + " starting with a letter or '_', was: " + (name == null ? "null" : "'" + name + "'"));
        }
        this.name = name;
        return this;
    }

    /** Narrows delivery to events of {@code type} (and any other included type); pages still advance. */
    public final SubscriptionBase includeType(Class<?> type) {
        includedTypes.add(Objects.requireNonNull(type, "type"));
        return this;
    }

    /** Starts at the current high water mark whenever the shard starts, ignoring history and persisted progress. */
    public final SubscriptionBase subscribeFromPresent() {
        this.fromPresent = true;
        return this;
    }

    public final Set<Class<?>> includedTypes() {
        return Set.copyOf(includedTypes);
    }

    public final boolean isSubscribeFromPresent() {
        return fromPresent;
    }
}
