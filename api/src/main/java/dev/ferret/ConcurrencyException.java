package dev.ferret;

/**
 * A stream was not at the version a writer expected, or two writers raced to create it. Nothing of the losing
 * unit of work was written; reload and retry.
 */
public class ConcurrencyException extends FerretException {

    private static final long serialVersionUID = 1L;

    private final String streamId;
    private final long expectedVersion;
    private final long actualVersion;

    /**
     * @param expectedVersion the version the writer expected, or -1 when it expected none
     * @param actualVersion   the version found, or -1 when unknown
     */
    public ConcurrencyException(String streamId, long expectedVersion, long actualVersion, String message) {
        super(message);
        this.streamId = streamId;
        this.expectedVersion = expectedVersion;
        this.actualVersion = actualVersion;
    }

    public String streamId() {
        return streamId;
    }

    public long expectedVersion() {
        return expectedVersion;
    }

    public long actualVersion() {
        return actualVersion;
    }
}
