package dev.ferret.bench;

/** The benchmark's only event type. Public, for JSON-B. */
public record Tick(int n) {
}
