package dev.ferret;

import dev.ferret.daemon.ProjectionDaemon;
import java.time.Duration;

/**
 * The entry point: one per database (or tenant set), thread-safe, long-lived. Sessions are cheap and short-lived.
 *
 * <p>Closing the store releases the connection pool it created, if it created one; a {@code DataSource} handed
 * in by the application is left open.
 */
public interface DocumentStore extends AutoCloseable {

    /** Opens a read-only session for the default tenant. */
    QuerySession querySession();

    /**
     * Opens a read-only session for {@code tenantId}.
     *
     * @throws IllegalArgumentException when {@code tenantId} is blank or longer than
     *                                  {@link IdLimits#MAX_TENANT_ID_LENGTH}
     */
    QuerySession querySession(String tenantId);

    /** Opens a unit of work for the default tenant: changes are buffered until {@link DocumentSession#saveChanges()}. */
    DocumentSession openSession();

    /**
     * Opens a unit of work for {@code tenantId}.
     *
     * @throws IllegalArgumentException when {@code tenantId} is blank or longer than
     *                                  {@link IdLimits#MAX_TENANT_ID_LENGTH}
     */
    DocumentSession openSession(String tenantId);

    /** The database engine this store talks to, detected from connection metadata unless configured. */
    DatabaseEngine engine();

    /** The async daemon of this store. */
    ProjectionDaemon daemon();

    /**
     * Waits until every async shard has reached the high water mark as it stands now, so that reads see every
     * event committed before the call.
     *
     * @throws dev.ferret.daemon.NonStaleTimeoutException naming each shard that lagged, and by how much
     * @throws IllegalStateException when the daemon does not run on this node
     */
    void waitForNonStaleProjectionData(Duration timeout);

    @Override
    void close();
}
