package dev.ferret.it.app;

/** Stage 2 of the {@code customers} composite, built from stage 1's {@link ItCustomer}. */
public record ItTier(String id, String tier, int orders) {
}
