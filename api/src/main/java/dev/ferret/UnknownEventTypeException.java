package dev.ferret;

/** An event was read whose stored type alias has no registered Java type. */
public class UnknownEventTypeException extends FerretException {

    private static final long serialVersionUID = 1L;

    private final String typeName;
    private final long sequence;

    public UnknownEventTypeException(String typeName, long sequence) {
        super("Event at sequence " + sequence + " has type '" + typeName
                + "', which is not registered; register it with options.events().register(YourEvent.class, \""
                + typeName + "\")");
        this.typeName = typeName;
        this.sequence = sequence;
    }

    public String typeName() {
        return typeName;
    }

    public long sequence() {
        return sequence;
    }
}
