package dev.ferret.sample;

/** Every order at a glance: one document ({@code id = "all"}) fed by every order stream. */
public record Dashboard(String id, int placed, int shipped, int cancelled, long revenueCents) {

    public static final String ID = "all";

    public Dashboard withPlaced(long amountCents) {
        return new Dashboard(id, placed + 1, shipped, cancelled, revenueCents + amountCents);
    }

    public Dashboard withShipped() {
        return new Dashboard(id, placed, shipped + 1, cancelled, revenueCents);
    }

    public Dashboard withCancelled() {
        return new Dashboard(id, placed, shipped, cancelled + 1, revenueCents);
    }
}
