package dev.ferret;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

/**
 * The database could not be reached or failed a statement Ferret issued. {@link #isTransient()} says whether running
 * the same unit of work again may succeed.
 */
public class DatabaseException extends FerretException {

    private static final long serialVersionUID = 1L;

    private final boolean transientFailure;

    /** A failure whose transience is read from {@code cause} by the JDBC rules (see {@link #isTransient()}). */
    public DatabaseException(String message, Throwable cause) {
        this(message, cause, transientByJdbc(cause));
    }

    /** A failure the engine's own error codes have classified. */
    public DatabaseException(String message, Throwable cause, boolean transientFailure) {
        super(message, cause);
        this.transientFailure = transientFailure;
    }

    /**
     * Whether the same unit of work may succeed when run again, and nothing of it was written: a deadlock victim, a
     * lock wait that timed out, a dropped connection, or an append whose sequence numbers the daemon's high water
     * mark passed before the append owned them. Retry those (with a back-off); anything else will fail again.
     */
    public boolean isTransient() {
        return transientFailure;
    }

    /** SQLTransientException and SQLRecoverableException anywhere in the causes, or SQLState class 08 or 40001. */
    private static boolean transientByJdbc(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || sql.getSQLState().equals("40001"))) {
                return true;
            }
        }
        return false;
    }
}
