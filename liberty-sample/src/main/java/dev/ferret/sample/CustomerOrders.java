package dev.ferret.sample;

import java.util.List;

/** The orders of one customer, written by the {@link CustomerOrdersProjection}. */
public record CustomerOrders(String id, List<String> orderIds) {
}
