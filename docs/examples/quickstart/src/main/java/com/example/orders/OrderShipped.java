package com.example.orders;

public record OrderShipped(String carrier) {
}
