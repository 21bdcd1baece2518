package com.example.orders;

/** An event: a public record, stored as JSON under the alias "OrderPlaced". */
public record OrderPlaced(String customer, long amountCents) {
}
