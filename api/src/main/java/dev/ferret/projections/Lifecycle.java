package dev.ferret.projections;

/** When a projection runs. */
public enum Lifecycle {
    /** In the background async daemon, after the events committed; eventually consistent. */
    ASYNC,
    /** Inside the appending transaction; consistent with the events, and a failing projection fails the append. */
    INLINE
}
