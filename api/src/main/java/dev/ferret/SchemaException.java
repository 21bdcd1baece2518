package dev.ferret;

/** The database schema is missing objects Ferret needs, or could not be created. */
public class SchemaException extends FerretException {

    private static final long serialVersionUID = 1L;

    public SchemaException(String message) {
        super(message);
    }

    public SchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
