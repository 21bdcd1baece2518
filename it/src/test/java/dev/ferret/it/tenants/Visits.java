package dev.ferret.it.tenants;

/** How many visits a tenant's site had. */
public record Visits(String id, int count) {
}
