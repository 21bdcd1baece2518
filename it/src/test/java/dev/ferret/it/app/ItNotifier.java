package dev.ferret.it.app;

import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import jakarta.enterprise.context.Dependent;

/** A subscription bean, discovered through the same annotation as projections. */
@Dependent
@AsyncProjection(name = "notifier")
public class ItNotifier extends SubscriptionBase {

    public ItNotifier() {
        includeType(ItEvents.Placed.class);
    }

    @Override
    public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                            DocumentOperations operations, Cancellation cancellation) {
        return PostCommitListener.NONE;
    }
}
