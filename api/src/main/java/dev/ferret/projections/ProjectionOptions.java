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

    /** Listeners called around every async batch commit. */
    public List<AsyncListener> asyncListeners() {
        return asyncListeners;
    }

    public List<Registration> registrations() {
        return Collections.unmodifiableList(registrations);
    }
}
