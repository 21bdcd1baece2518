package dev.ferret.projections;

import java.util.Optional;

/**
 * What a projection reads and writes while applying a page, for the tenant of the event it is applying. Writes are
 * buffered and committed with the page; a document written several times in a page is written once.
 */
public interface DocumentOperations {

    String tenantId();

    /** The document as this page left it so far, else as committed. */
    <T> Optional<T> load(Class<T> type, Object id);

    void store(Object document);

    void delete(Class<?> type, Object id);
}
