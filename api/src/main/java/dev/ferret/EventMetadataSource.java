package dev.ferret;

/**
 * Where a session's event metadata comes from by default: called once as each session opens, on the thread that
 * opens it, so it can read what that thread is doing (a request, a message, a job). What a session or an append sets
 * itself wins over it. Register it with {@code options.events().metadataSource(...)}; in a CDI container a bean of
 * this type replaces the extension's own, which reads the current HTTP request.
 */
@FunctionalInterface
public interface EventMetadataSource {

    /** Metadata for nothing in particular. */
    EventMetadataSource NONE = () -> EventMetadata.NONE;

    /** The metadata of what the calling thread is doing now; {@link EventMetadata#NONE} when nothing. */
    EventMetadata current();
}
