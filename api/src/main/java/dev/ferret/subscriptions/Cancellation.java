package dev.ferret.subscriptions;

/** Tells long-running page code that its shard is stopping; the page is re-processed by the next owner. */
@FunctionalInterface
public interface Cancellation {

    boolean isCancelled();
}
