package dev.ferret;

import dev.ferret.daemon.ProjectionDaemon;
import java.time.Duration;
import java.util.ServiceLoader;
import java.util.function.Consumer;

/**
 * The entry point: one per database (or tenant set), thread-safe, long-lived. Sessions are cheap and short-lived.
 *
 * <p>Closing the store releases the connection pool it created, if it created one; a {@code DataSource} handed
 * in by the application is left open.
 */
public interface DocumentStore extends AutoCloseable {

    /**
     * Builds a store in Java SE (in a Jakarta EE container, inject {@code DocumentStore} instead): connects, detects
     * the engine, applies or verifies the schema, and starts the daemon in its mode. Needs Ferret's runtime
     * ({@code ferret-runtime}) on the class path.
     *
     * @throws ConfigurationException naming the setting and its value when the options cannot work, or when no
     *                                runtime is on the class path
     * @throws DatabaseException      naming the URL (without its password) when the database cannot be reached
     */
    static DocumentStore create(StoreOptions options) {
        return ServiceLoader.load(StoreFactory.class, DocumentStore.class.getClassLoader()).findFirst()
                .or(() -> ServiceLoader.load(StoreFactory.class).findFirst())
                .orElseThrow(() -> new ConfigurationException("no Ferret runtime on the class path: add the"
                        + " dependency dev.ferret:ferret-runtime"))
                .create(options);
    }

    /** {@link #create(StoreOptions)} of options {@code configure} sets. */
    static DocumentStore create(Consumer<StoreOptions> configure) {
        StoreOptions options = new StoreOptions();
        configure.accept(options);
        return create(options);
    }

    /** Opens a read-only session for the default tenant. */
    QuerySession querySession();

    /**
     * Opens a read-only session for {@code tenantId}.
     *
     * @throws IllegalArgumentException when {@code tenantId} is blank or longer than
     *                                  {@link IdLimits#MAX_TENANT_ID_LENGTH}
     */
    QuerySession querySession(String tenantId);

    /**
     * The version of the projection whose table {@code tenantId}'s query sessions read {@code documentType} from now:
     * while a new projection version replays into its own table, the version before it serves reads, until the new
     * one's progression has reached the prior one's; then the new one, for good. 1 for a type no version above 1
     * writes.
     *
     * @throws IllegalArgumentException when {@code tenantId} is blank or too long
     */
    int readVersion(Class<?> documentType, String tenantId);

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
