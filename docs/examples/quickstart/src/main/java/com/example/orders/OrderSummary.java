package com.example.orders;

/** The read model: one document per order stream, its id the stream's id. */
public record OrderSummary(String id, String customer, long amountCents, String status) {
}
