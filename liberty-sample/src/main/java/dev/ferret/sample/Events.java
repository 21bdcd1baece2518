package dev.ferret.sample;

/** The order events. Public records: JSON-B writes and reads them, stored under their simple names. */
public final class Events {

    private Events() {
    }

    public record OrderPlaced(String orderId, String customer, long amountCents) {
    }

    public record ItemAdded(String orderId, String sku, int quantity, long priceCents) {
    }

    public record OrderShipped(String orderId) {
    }

    public record OrderCancelled(String orderId, String reason) {
    }
}
