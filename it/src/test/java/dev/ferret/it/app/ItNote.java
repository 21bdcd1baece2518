package dev.ferret.it.app;

public record ItNote(String id, String text) {
}
