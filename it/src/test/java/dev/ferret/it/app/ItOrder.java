package dev.ferret.it.app;

public record ItOrder(String id, String customer, int events) {
}
