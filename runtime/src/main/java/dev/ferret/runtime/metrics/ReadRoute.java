package dev.ferret.runtime.metrics;

import java.util.Locale;

/**
 * Where a query session's read of a database with a read replica went, and why: the value of the attribute
 * {@value OpenTelemetryMetrics#ROUTE_ATTRIBUTE} of {@code ferret.replica.reads}, in lower case.
 */
public enum ReadRoute {
    /** The replica: the read needed no position of the primary. */
    REPLICA,
    /** The replica, proven to have replayed the position the read needed. */
    REPLICA_CAUGHT_UP,
    /** The primary: the replica did not reach the needed position within the catch-up bound. */
    PRIMARY_REPLICA_BEHIND,
    /** The primary: the read needed a position and the engine reports none a replica could be proven against. */
    PRIMARY_UNPROVABLE;

    /** The attribute value: the name in lower case. */
    public String attribute() {
        return name().toLowerCase(Locale.ROOT);
    }
}
