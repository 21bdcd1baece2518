package dev.ferret;

import java.util.List;
import java.util.Optional;

/**
 * A stream's current state and version, fetched to decide what to append: the command-handler pattern in one call.
 * Events appended through it are buffered in the session that fetched it and expect the stream to still be at
 * {@link #version()} when that session saves; another writer's append in between makes
 * {@link DocumentSession#saveChanges()} throw {@link ConcurrencyException} and write nothing.
 *
 * @param <T> the aggregate (snapshot) type
 */
public interface StreamForWriting<T> {

    String streamId();

    /** The stream's version when fetched; 0 when it does not exist yet (appending then starts it). */
    long version();

    /** The aggregate as of {@link #version()}; empty when the stream does not exist or its events delete it. */
    Optional<T> aggregate();

    /** Buffers {@code events} at the fetched version. */
    void append(Object... events);

    /** Buffers {@code events} at the fetched version. */
    void append(List<?> events);
}
