package dev.ferret.projections;

import dev.ferret.ConfigurationException;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.subscriptions.SubscriptionBase;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * Registered projections, subscriptions and async listeners.
 *
 * <p>Projections and subscriptions share one namespace: a name keys the progression row of its shard
 * ({@code <name>:All}, {@code <name>:V<n>:All} above version 1), and a version above 1 reads the rows of every
 * prior version of its name as the prior mark. A subscription named like a projection of any version would run on,
 * or be read as, that projection's progression, so such a clash is refused in either order of registration. Names
 * hold no {@code ':'}, so equal names are the only way two shard names meet.
 */
public final class ProjectionOptions {

    /**
     * A projection and when it runs.
     *
     * @param projection the projection
     * @param lifecycle  async (daemon) or inline (in the appending transaction)
     */
    public record Registration(Projection projection, Lifecycle lifecycle) {

        /** The projections that fold events: the projection itself, or a composite's members stage by stage. */
        public List<Projection> folding() {
            return projection instanceof CompositeProjection composite ? composite.members() : List.of(projection);
        }
    }

    private final List<Registration> registrations = new ArrayList<>();
    private final List<SubscriptionBase> subscriptions = new ArrayList<>();
    private final List<AsyncListener> asyncListeners = new ArrayList<>();

    /** Registers a snapshot of {@code documentType}, configured by {@code configure}. */
    public <T> ProjectionOptions snapshot(Class<T> documentType, Lifecycle lifecycle,
                                          Consumer<Snapshot<T>> configure) {
        Snapshot<T> snapshot = Snapshot.of(documentType);
        configure.accept(snapshot);
        return add(snapshot, lifecycle);
    }

    /** Registers any projection. */
    public ProjectionOptions add(Projection projection, Lifecycle lifecycle) {
        Projection.require(projection, "projection");
        Projection.require(lifecycle, "lifecycle");
        if (projection instanceof CompositeProjection composite) {
            if (lifecycle != Lifecycle.ASYNC) {
                throw new ConfigurationException("composite projection '" + composite.name() + "' is registered "
                        + lifecycle + "; a composite runs only in the daemon (Lifecycle.ASYNC)");
            }
            if (composite.stages().isEmpty()) {
                throw new ConfigurationException("composite projection '" + composite.name() + "' has no stages;"
                        + " add its members with stage(...)");
            }
        }
        for (Registration existing : registrations) {
            if (existing.projection().name().equals(projection.name())
                    && existing.projection().version() == projection.version()) {
                throw new ConfigurationException("projection name '" + projection.name() + "' (version "
                        + projection.version() + ") is registered twice: " + existing.projection() + " and "
                        + projection);
            }
        }
        for (SubscriptionBase subscription : subscriptions) {
            if (subscription.name().equals(projection.name())) {
                throw clash(projection, subscription);
            }
        }
        registrations.add(new Registration(projection, lifecycle));
        return this;
    }

    private static ConfigurationException clash(Projection projection, SubscriptionBase subscription) {
        String name = projection.name();
        return new ConfigurationException("projection " + projection + " and subscription '" + name + "' ("
                + subscription.getClass().getName() + ") share the name '" + name + "': projections and"
                + " subscriptions share one namespace, since the name keys their progression ('" + name
                + ":All' is the subscription's and version 1's, which every later version reads as its prior"
                + " mark); give one of them another name");
    }

    /** Registers a subscription; it runs in the daemon (there are no inline subscriptions). */
    public ProjectionOptions subscribe(SubscriptionBase subscription) {
        return subscribe(subscription, s -> { });
    }

    /** Registers a subscription after {@code configure} named or filtered it. */
    public <S extends SubscriptionBase> ProjectionOptions subscribe(S subscription, Consumer<? super S> configure) {
        Projection.require(subscription, "subscription");
        configure.accept(subscription);
        try {
            // the default, the simple class name, is not checked by name(String): an anonymous class has none
            subscription.name(subscription.name());
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("subscription " + subscription.getClass().getName() + " has no valid"
                    + " name (" + e.getMessage() + "); name it with s -> s.name(...)");
        }
        for (SubscriptionBase existing : subscriptions) {
            if (existing.name().equals(subscription.name())) {
                throw new ConfigurationException("subscription name '" + subscription.name()
                        + "' is registered twice: " + existing.getClass().getName() + " and "
                        + subscription.getClass().getName());
            }
        }
        for (Registration registration : registrations) {
            if (registration.projection().name().equals(subscription.name())) {
                throw clash(registration.projection(), subscription);
            }
        }
        subscriptions.add(subscription);
        return this;
    }

    /** Registers a new instance of {@code type} (it needs a public no-argument constructor). */
    public <S extends SubscriptionBase> ProjectionOptions subscribe(Class<S> type,
            Consumer<? super S> configure) {
        S subscription;
        try {
            subscription = type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new ConfigurationException("subscription " + type.getName()
                    + " needs a public no-argument constructor to be registered by type: " + e);
        }
        return subscribe(subscription, configure);
    }

    public List<SubscriptionBase> subscriptions() {
        return Collections.unmodifiableList(subscriptions);
    }

    /**
     * Checks the namespace again over everything registered, as the store does at startup: a subscription can be
     * renamed after it was registered.
     *
     * @throws ConfigurationException naming both parties of the first clash
     */
    public void validate() {
        ProjectionOptions replay = new ProjectionOptions();
        registrations.forEach(r -> replay.add(r.projection(), r.lifecycle()));
        subscriptions.forEach(replay::subscribe);
    }

    private SideEffectPublisher messagePublisher = message -> { };
    private Consumer<Object> payloadPublisher = message -> { };

    /**
     * Receives the payload of every message projections publish as a side effect, from the durable outbox after its
     * page committed: at least once, so a receiver must tolerate a repeat. {@link #publishMessages} also hands over
     * each message's stable id.
     */
    public ProjectionOptions publishPayloads(Consumer<Object> publisher) {
        Consumer<Object> payloads = Projection.require(publisher, "publisher");
        this.payloadPublisher = payloads;
        this.messagePublisher = message -> payloads.accept(message.payload());
        return this;
    }

    /** As {@link #publishPayloads}, with each message whole: its stable id (for an idempotent receiver) and payload. */
    public ProjectionOptions publishMessages(SideEffectPublisher publisher) {
        SideEffectPublisher messages = Projection.require(publisher, "publisher");
        this.messagePublisher = messages;
        this.payloadPublisher = payload -> {
            throw new UnsupportedOperationException("the side-effect publisher takes outbox messages with ids");
        };
        return this;
    }

    /** @deprecated the name read as if it took the outbox's messages; it takes payloads: {@link #publishPayloads}. */
    @Deprecated
    public ProjectionOptions sideEffectPublisher(Consumer<Object> publisher) {
        return publishPayloads(publisher);
    }

    /** @deprecated the name read as the payload view; it takes whole messages: {@link #publishMessages}. */
    @Deprecated
    public ProjectionOptions outboxPublisher(SideEffectPublisher publisher) {
        return publishMessages(publisher);
    }

    /** The payload-only view of {@link #publishPayloads}. */
    public Consumer<Object> getSideEffectPublisher() {
        return payloadPublisher;
    }

    /** What every outbox message is handed to. */
    public SideEffectPublisher getOutboxPublisher() {
        return messagePublisher;
    }

    /** Listeners called around every async batch commit. */
    public List<AsyncListener> asyncListeners() {
        return asyncListeners;
    }

    public List<Registration> registrations() {
        return Collections.unmodifiableList(registrations);
    }
}
