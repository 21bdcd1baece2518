package dev.ferret;

import java.time.Duration;
import java.util.List;

/**
 * A query over one document type. Filters compare a top-level JSON property's text with the text of a value
 * ({@code "Active"}, {@code 42} and {@code true} compare as they appear in JSON).
 */
public interface DocumentQuery<T> {

    /**
     * Keeps documents whose top-level JSON property {@code property} equals {@code value}.
     *
     * @throws IllegalArgumentException when {@code property} is not a plain identifier or {@code value} is null
     */
    DocumentQuery<T> where(String property, Object value);

    /**
     * Before running, waits until the async shards that write this document type have caught up with the high water
     * mark as it stands now.
     *
     * @throws dev.ferret.daemon.NonStaleTimeoutException when they did not within {@code timeout}
     */
    DocumentQuery<T> queryForNonStaleData(Duration timeout);

    /** Runs the query. */
    List<T> toList();

    /** Runs the query and counts the matches. */
    long count();
}
