package dev.ferret;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A query over one document type, for the session's tenant: filters on JSON properties, ordering, paging. Property
 * paths are validated (dot-joined Java identifiers, {@code customer.address.city}) and rendered into the statement;
 * every value is a bound parameter. Values compare by the type the document class declares for the path (numbers as
 * numbers, {@code Instant}/{@code OffsetDateTime} as points in time, the rest as JSON text). Results are ordered by
 * the {@code orderBy} keys, then by id, so paging is stable.
 */
public interface DocumentQuery<T> {

    /**
     * Keeps documents whose property at {@code path} equals {@code value}: {@code where(Filter.eq(path, value))}.
     *
     * @throws IllegalArgumentException when {@code path} is not a valid path or {@code value} is null
     */
    DocumentQuery<T> where(String path, Object value);

    /** Keeps documents {@code filter} holds for; several calls combine with AND. */
    DocumentQuery<T> where(Filter filter);

    /** Orders by the property at {@code path}, ascending; several calls add keys in order. */
    DocumentQuery<T> orderBy(String path);

    /** Orders by the property at {@code path}, descending. */
    DocumentQuery<T> orderByDescending(String path);

    /** At most {@code count} documents (1 or more). */
    DocumentQuery<T> limit(int count);

    /** Skips the first {@code count} documents (0 or more); prefer {@link #startAfter} for deep pages. */
    DocumentQuery<T> offset(int count);

    /**
     * Keyset paging: only the documents after {@code last} in this query's order (its order keys, then its id), so
     * the next page costs the same however deep it is. {@code last} is the final document of the previous page.
     *
     * @throws IllegalArgumentException when {@code last} holds null at one of the order keys
     */
    DocumentQuery<T> startAfter(T last);

    /**
     * Waits now, at this call, until the async shards that write this document type have caught up with the high
     * water mark as it stands now; the query then reads at least that state whenever it runs.
     *
     * @throws dev.ferret.daemon.NonStaleTimeoutException when they did not within {@code timeout}
     */
    DocumentQuery<T> queryForNonStaleData(Duration timeout);

    /** Runs the query. */
    List<T> toList();

    /** Counts the matches (ignoring order, limit and offset). */
    long count();

    /** Whether anything matches. */
    boolean exists();

    /** The first match in order, if any. */
    Optional<T> first();

    /**
     * The only match.
     *
     * @throws IllegalStateException naming the type when none or more than one matches
     */
    T single();
}
