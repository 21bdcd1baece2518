package dev.ferret.it.app;

/** Stage 1 of the {@code customers} composite: orders placed per customer. */
public record ItCustomer(String id, int orders) {
}
