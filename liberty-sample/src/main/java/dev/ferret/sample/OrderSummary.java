package dev.ferret.sample;

/** One order, folded from its stream by the {@code OrderSummary} snapshot. */
public record OrderSummary(String id, String customer, int items, long totalCents, String status) {

    /**
     * The write side does not check the quantity, so an item of none or fewer reaches the projection, which refuses
     * it: the sample's poison event, for trying the console's skip, replay and discard on.
     */
    public OrderSummary withItem(int quantity, long priceCents) {
        if (quantity < 1) {
            throw new IllegalArgumentException("order " + id + ": an item quantity must be at least 1, not " + quantity);
        }
        return new OrderSummary(id, customer, items + quantity, totalCents + quantity * priceCents, status);
    }

    public OrderSummary withStatus(String newStatus) {
        return new OrderSummary(id, customer, items, totalCents, newStatus);
    }
}
