package dev.ferret.cdi;

import jakarta.enterprise.concurrent.ManagedExecutors;
import jakarta.enterprise.concurrent.ManagedTask;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * The daemon's page workers on a container's {@code ManagedExecutorService}. Each task (one run of a shard's page
 * loop: it runs until the shard has caught up with the mark, which after a backlog or during a rebuild may take long)
 * carries {@link ManagedTask#LONGRUNNING_HINT} and an identity name, so a server that routes long-running work to
 * its own policy (Liberty: {@code longRunningPolicyRef}) keeps it off the request threads.
 *
 * <p>Lifecycle methods are not forwarded: a managed executor belongs to the container.
 */
final class HintedExecutor extends ContainerOwnedExecutor {

    private final ExecutorService delegate;
    private final Map<String, String> properties;

    HintedExecutor(ExecutorService delegate, boolean longRunning) {
        this(delegate, longRunning, "ferret-shard-page-loop");
    }

    /** Tasks named {@code identity} in the container's thread dumps and hung-thread reports. */
    HintedExecutor(ExecutorService delegate, boolean longRunning, String identity) {
        this.delegate = delegate;
        this.properties = Map.of(ManagedTask.LONGRUNNING_HINT, Boolean.toString(longRunning),
                ManagedTask.IDENTITY_NAME, identity);
    }

    @Override
    public Future<?> submit(Runnable task) {
        return delegate.submit(ManagedExecutors.managedTask(task, properties, null));
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        return delegate.submit(ManagedExecutors.managedTask(task, properties, null));
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        return delegate.submit(ManagedExecutors.managedTask(task, properties, null), result);
    }

    @Override
    public void execute(Runnable command) {
        delegate.execute(ManagedExecutors.managedTask(command, properties, null));
    }
}
