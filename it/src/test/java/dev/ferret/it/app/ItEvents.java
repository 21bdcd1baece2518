package dev.ferret.it.app;

public final class ItEvents {
    private ItEvents() {
    }

    public record Placed(String orderId, String customer) {
    }

    public record Poison(String orderId) {
    }

    /** Handled by {@link ItNotes} only, an {@code EventProjection}. */
    public record Noted(String noteId, String text) {
    }

    /** Published by the ItOrder projection for every order it creates. */
    public record Announced(String orderId) {
    }
}
