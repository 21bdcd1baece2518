package dev.ferret.it.dup;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import jakarta.enterprise.context.Dependent;

/** A subscription named like the projections beside it: their shards would clash. */
@Dependent
@AsyncProjection(name = "Dup")
public class DupSubscription extends SubscriptionBase {

    @Override
    public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                            DocumentOperations operations, Cancellation cancellation) {
        return PostCommitListener.NONE;
    }
}
