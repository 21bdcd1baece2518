package dev.ferret.subscriptions;

/**
 * Called once after the page's transaction committed, outside the retry of transient failures, so a retried page
 * never fires it twice. A page that committed while its shard was being stopped still gets it. A throw is logged and
 * swallowed: the page is durable and is not processed again.
 */
@FunctionalInterface
public interface PostCommitListener {

    /** The listener of a page with nothing to do after its commit. */
    PostCommitListener NONE = () -> { };

    void afterCommit() throws Exception;
}
