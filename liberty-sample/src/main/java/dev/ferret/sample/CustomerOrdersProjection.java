package dev.ferret.sample;

import dev.ferret.EventEnvelope;
import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import jakarta.enterprise.context.Dependent;
import java.util.ArrayList;
import java.util.List;

/** A class-based projection: a CDI bean (so it could inject services) extending {@link EventProjection}. */
@Dependent // a bean defining annotation: Liberty does not take a stereotype from a library jar as one
@AsyncProjection(name = "CustomerOrders")
public class CustomerOrdersProjection extends EventProjection {

    public CustomerOrdersProjection() {
        super("CustomerOrders", CustomerOrders.class);
    }

    @Override
    public void apply(EventEnvelope event, DocumentOperations operations) {
        if (event.data() instanceof Events.OrderPlaced placed) {
            CustomerOrders current = operations.load(CustomerOrders.class, placed.customer())
                    .orElse(new CustomerOrders(placed.customer(), List.of()));
            List<String> ids = new ArrayList<>(current.orderIds());
            if (!ids.contains(placed.orderId())) {
                ids.add(placed.orderId());
            }
            operations.store(new CustomerOrders(placed.customer(), ids));
        }
    }
}
