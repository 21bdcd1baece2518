package dev.ferret.cdi;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A view of one of the container's managed executors. The container owns its lifecycle and refuses the lifecycle
 * methods, so they are not forwarded: shutting the view down only marks it.
 */
abstract class ContainerOwnedExecutor extends AbstractExecutorService {

    private volatile boolean shutdown;

    @Override
    public final void shutdown() {
        shutdown = true;
    }

    @Override
    public final List<Runnable> shutdownNow() {
        shutdown = true;
        return List.of();
    }

    @Override
    public final boolean isShutdown() {
        return shutdown;
    }

    @Override
    public final boolean isTerminated() {
        return shutdown;
    }

    @Override
    public final boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }
}
