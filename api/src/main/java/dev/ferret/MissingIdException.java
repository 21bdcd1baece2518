package dev.ferret;

/** A document type has no usable id, or a document was stored with a null id. */
public class MissingIdException extends FerretException {

    private static final long serialVersionUID = 1L;

    public MissingIdException(String message) {
        super(message);
    }
}
