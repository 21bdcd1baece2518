package dev.ferret.sample;

/** One order, folded from its stream by the {@code OrderSummary} snapshot. */
public record OrderSummary(String id, String customer, int items, long totalCents, String status) {

    public OrderSummary withItem(int quantity, long priceCents) {
        return new OrderSummary(id, customer, items + quantity, totalCents + quantity * priceCents, status);
    }

    public OrderSummary withStatus(String newStatus) {
        return new OrderSummary(id, customer, items, totalCents, newStatus);
    }
}
