package dev.ferret.it.app;

public record FragileDoc(String id) {
}
