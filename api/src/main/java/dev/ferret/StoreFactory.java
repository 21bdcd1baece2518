package dev.ferret;

/**
 * What builds stores: implemented by Ferret's runtime ({@code ferret-runtime}) and found through
 * {@link java.util.ServiceLoader}, so that {@link DocumentStore#create} needs nothing but this API at compile time.
 * Not for applications to implement.
 */
public interface StoreFactory {

    /**
     * Builds a store: connects, detects the engine, applies or verifies the schema, starts the daemon in its mode.
     *
     * @throws ConfigurationException naming the setting and its value when the options cannot work
     * @throws DatabaseException      naming the URL (without its password) when the database cannot be reached
     */
    DocumentStore create(StoreOptions options);
}
