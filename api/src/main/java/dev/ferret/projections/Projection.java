package dev.ferret.projections;

import java.util.Objects;
import java.util.Set;

/**
 * What every projection has: a name (its progression identity is {@code <name>:All}), a version, and the
 * document types it writes (the ones a per-query non-stale wait waits for, and a rebuild tears down).
 */
public abstract sealed class Projection permits AggregateProjection, CompositeProjection, EventProjection {

    private final String name;
    private int version = 1;
    private boolean gateSideEffectsBehindPriorVersion;
    private boolean ownTransaction;

    Projection(String name) {
        if (name == null || !name.matches("[A-Za-z_][A-Za-z0-9_.-]{0,199}")) {
            throw new IllegalArgumentException("projection name must be 1-200 letters, digits, '_', '.' or '-'"
                    + " starting with a letter or '_', was: " + (name == null ? "null" : "'" + name + "'"));
        }
        this.name = name;
    }

    public final String name() {
        return name;
    }

    public final int version() {
        return version;
    }

    /** Bump when the projection's logic or shape changes; each version keeps its own progression. */
    protected final void version(int version) {
        if (version < 1) {
            throw new IllegalArgumentException("version of projection '" + name + "' must be 1 or more, was "
                    + version);
        }
        this.version = version;
    }

    /**
     * Opt into the side-effect gate: when this version (above 1) starts behind the highest progression N of any
     * prior version, it replays up to N with side effects held back (documents are still built), then runs on from
     * N with side effects. Inert for version 1.
     */
    protected final void gateSideEffects(boolean gate) {
        this.gateSideEffectsBehindPriorVersion = gate;
    }

    public final boolean isGateSideEffectsBehindPriorVersion() {
        return gateSideEffectsBehindPriorVersion;
    }

    /**
     * Keep every page of this projection in a transaction of its own, never shared with other shards' pages of the
     * same database (see {@code DaemonSettings.sharedTransactions}); for a projection whose pages must not wait for,
     * or roll back with, other shards' pages, for example one that writes through a database trigger.
     */
    protected final void commitAlone(boolean own) {
        this.ownTransaction = own;
    }

    public final boolean isOwnTransaction() {
        return ownTransaction;
    }

    /** The document types this projection writes. */
    public abstract Set<Class<?>> documentTypes();

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + name + (version > 1 ? " v" + version : "") + "]";
    }

    static <T> T require(T value, String what) {
        return Objects.requireNonNull(value, what);
    }
}
