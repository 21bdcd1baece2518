package dev.ferret.projections;

/** One document per stream, whose id is the stream id. */
public final class Snapshot<T> extends AggregateProjection<T, Snapshot<T>> {

    private Snapshot(String name, Class<T> documentType) {
        super(name, documentType);
    }

    /** A snapshot named after the document type's simple name. */
    public static <T> Snapshot<T> of(Class<T> documentType) {
        return new Snapshot<>(documentType.getSimpleName(), documentType);
    }

    public static <T> Snapshot<T> of(String name, Class<T> documentType) {
        return new Snapshot<>(name, documentType);
    }
}
