package dev.ferret.projections;

import dev.ferret.ConfigurationException;
import dev.ferret.daemon.AsyncListener;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/** Registered projections and async listeners. */
public final class ProjectionOptions {

    /**
     * A projection and when it runs.
     *
     * @param projection the projection
     * @param lifecycle  async (daemon) or inline (in the appending transaction)
     */
    public record Registration(Projection projection, Lifecycle lifecycle) {
    }

    private final List<Registration> registrations = new ArrayList<>();
    private final List<dev.ferret.subscriptions.SubscriptionBase> subscriptions = new ArrayList<>();
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
        for (Registration existing : registrations) {
            if (existing.projection().name().equals(projection.name())
                    && existing.projection().version() == projection.version()) {
                throw new ConfigurationException("projection name '" + projection.name() + "' (version "
                        + projection.version() + ") is registered twice: " + existing.projection() + " and "
                        + projection);
            }
        }
        registrations.add(new Registration(projection, lifecycle));
        return this;
    }

    /** Registers a subscription; it runs in the daemon (there are no inline subscriptions). */
    public ProjectionOptions subscribe(dev.ferret.subscriptions.SubscriptionBase subscription) {
        return subscribe(subscription, s -> { });
    }

    /** Registers a subscription after {@code configure} named or filtered it. */
    public <S extends dev.ferret.subscriptions.SubscriptionBase> ProjectionOptions subscribe(S subscription,
            Consumer<? super S> configure) {
        Projection.require(subscription, "subscription");
        configure.accept(subscription);
        for (dev.ferret.subscriptions.SubscriptionBase existing : subscriptions) {
            if (existing.name().equals(subscription.name())) {
                throw new ConfigurationException("subscription name '" + subscription.name()
                        + "' is registered twice: " + existing.getClass().getName() + " and "
                        + subscription.getClass().getName());
            }
        }
        for (Registration registration : registrations) {
            if (registration.projection().name().equals(subscription.name())
                    && registration.projection().version() == 1) {
                throw new ConfigurationException("subscription name '" + subscription.name()
                        + "' is already the name of projection " + registration.projection());
            }
        }
        subscriptions.add(subscription);
        return this;
    }

    /** Registers a new instance of {@code type} (it needs a public no-argument constructor). */
    public <S extends dev.ferret.subscriptions.SubscriptionBase> ProjectionOptions subscribe(Class<S> type,
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

    public List<dev.ferret.subscriptions.SubscriptionBase> subscriptions() {
        return Collections.unmodifiableList(subscriptions);
    }

    private java.util.function.Consumer<Object> sideEffectPublisher = message -> { };

    /** Receives every message projections publish as a side effect, after their page committed. */
    public ProjectionOptions sideEffectPublisher(java.util.function.Consumer<Object> publisher) {
        this.sideEffectPublisher = Projection.require(publisher, "publisher");
        return this;
    }

    public java.util.function.Consumer<Object> getSideEffectPublisher() {
        return sideEffectPublisher;
    }

    /** Listeners called around every async batch commit. */
    public List<AsyncListener> asyncListeners() {
        return asyncListeners;
    }

    public List<Registration> registrations() {
        return Collections.unmodifiableList(registrations);
    }
}
