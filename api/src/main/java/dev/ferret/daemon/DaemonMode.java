package dev.ferret.daemon;

/** Whether and how this node runs async projections. */
public enum DaemonMode {
    /** Async projections do not run on this node (the default). */
    DISABLED,
    /** This node runs every async shard; for single-node deployments. */
    SOLO,
    /** Every node competes for a database lock per shard and runs the shards it holds. */
    HOT_COLD
}
