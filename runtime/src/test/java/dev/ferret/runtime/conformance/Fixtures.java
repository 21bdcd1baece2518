package dev.ferret.runtime.conformance;

import java.util.List;
import java.util.UUID;

/** Events and documents the conformance suite writes. */
public final class Fixtures {

    private Fixtures() {
    }

    public record OrderPlaced(String orderId, String customer, int amount) {
    }

    public record ItemAdded(String sku, int quantity, List<String> tags) {
    }

    public record OrderShipped(String orderId, String carrier) {
    }

    public record Customer(String id, String name, String status, int tier, boolean vip) {
    }

    /** A mutable bean with a UUID id and getters, the other common document shape. */
    public static final class Invoice {
        private UUID id;
        private String customer;
        private long cents;

        public Invoice() {
        }

        Invoice(UUID id, String customer, long cents) {
            this.id = id;
            this.customer = customer;
            this.cents = cents;
        }

        public UUID getId() {
            return id;
        }

        public void setId(UUID id) {
            this.id = id;
        }

        public String getCustomer() {
            return customer;
        }

        public void setCustomer(String customer) {
            this.customer = customer;
        }

        public long getCents() {
            return cents;
        }

        public void setCents(long cents) {
            this.cents = cents;
        }
    }

    public record NoId(String name) {
    }

    public record WrongIdType(Object id) {
    }

    static String newStreamId() {
        return "order-" + UUID.randomUUID();
    }
}
