package dev.ferret.runtime.dialect;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The engine's bulk load of rows into a table, for rows known not to be there yet (a rebuild's first page into an
 * empty shadow, a snapshot the page found missing): PostgreSQL's {@code COPY ... FROM STDIN} through the driver's
 * copy API. Stateless; safe to share.
 */
public interface BulkCopy {

    /**
     * Whether {@code connection} reaches the driver's copy API: false when it does not unwrap to the driver's own
     * connection, as an application server's wrapper may not when the driver's classes are not the ones Ferret sees.
     * The caller then inserts with a statement instead.
     */
    boolean supports(Connection connection);

    /**
     * Runs {@code copyStatement} (a {@code COPY ... FROM STDIN} in text format) with {@code rows}, inside the
     * connection's transaction; a row that breaks a constraint fails it as an insert would.
     *
     * @return how many rows the server took
     */
    long copyIn(Connection connection, String copyStatement, CopyRows rows) throws SQLException;
}
