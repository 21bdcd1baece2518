package dev.ferret.daemon;

import dev.ferret.FerretException;
import java.util.Map;

/** Projections did not reach the high water mark in time; the message names each laggard and its lag. */
public class NonStaleTimeoutException extends FerretException {

    private static final long serialVersionUID = 1L;

    private final transient Map<String, Long> lagByShard;

    public NonStaleTimeoutException(String message, Map<String, Long> lagByShard) {
        super(message);
        this.lagByShard = Map.copyOf(lagByShard);
    }

    /** Sequence numbers each lagging shard was behind its target. */
    public Map<String, Long> lagByShard() {
        return lagByShard;
    }
}
