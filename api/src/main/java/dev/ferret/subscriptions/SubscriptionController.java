package dev.ferret.subscriptions;

import dev.ferret.EventEnvelope;
import dev.ferret.projections.DocumentOperations;

/** What a subscription can ask of its shard while it processes a page. */
public interface SubscriptionController {

    /** The shard's progression identity. */
    String shardName();

    /**
     * Reports {@code event} as poison: with {@code skipApplyErrors} it goes to the dead letters in this page's
     * transaction and the page goes on; otherwise the page fails and the shard pauses.
     */
    void markBad(EventEnvelope event, Throwable error);

    /** Document operations for another tenant, in this page's transaction. */
    DocumentOperations operationsFor(String tenantId);
}
