package dev.ferret.bench;

/** One document per stream: how many {@link Tick}s it has seen. Public, for JSON-B. */
public record Tally(String id, long count) {

    /** The snapshot's create handler, shared with the plain-JDBC ceiling so both fold the same way. */
    public static Tally create(String id, Tick tick) {
        return new Tally(id, 1);
    }

    /** The snapshot's apply handler, shared with the plain-JDBC ceiling. */
    public static Tally apply(Tally doc, Tick tick) {
        return new Tally(doc.id(), doc.count() + 1);
    }
}
