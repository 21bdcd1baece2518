package dev.ferret.it.tenants;

/** A page visit, appended in a tenant's session. */
public record Visit(String page) {
}
