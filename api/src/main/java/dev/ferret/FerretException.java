package dev.ferret;

/** Base of every exception Ferret throws on purpose. */
public class FerretException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public FerretException(String message) {
        super(message);
    }

    public FerretException(String message, Throwable cause) {
        super(message, cause);
    }
}
