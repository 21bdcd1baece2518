package dev.ferret.subscriptions;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.DocumentOperations;

/** What a subscription can ask of its shard while it processes a page. */
public interface SubscriptionController {

    /** The shard's progression identity. */
    String shardName();

    /**
     * Reports {@code event} (one of this page's) as poison. The mark is recorded, and the runtime acts on every
     * recorded mark once {@code processEvents} returns, whatever the subscription did with an exception: with
     * {@code skipApplyErrors} each marked event gets one dead letter in this page's transaction (however often it
     * was marked) and the page goes on; otherwise the page fails with an
     * {@link dev.ferret.daemon.ApplyFailedException} naming the shard and the first event marked, and the shard
     * pauses at it. Without {@code skipApplyErrors} this call also throws that exception, to end the page early;
     * catching it does not save the page.
     *
     * @throws IllegalArgumentException when {@code event} is not on this page
     */
    void markBad(EventEnvelope event, Throwable error);

    /**
     * Document operations for {@code tenantId}, in this page's transaction.
     *
     * @throws IllegalStateException when the tenant lives in another database than the page (tenancy
     *                               databases): the message names the tenant and both databases
     */
    DocumentOperations operationsFor(String tenantId);
}
