package dev.ferret;

/** The database could not be reached or failed a statement Ferret issued. */
public class DatabaseException extends FerretException {

    private static final long serialVersionUID = 1L;

    public DatabaseException(String message, Throwable cause) {
        super(message, cause);
    }
}
