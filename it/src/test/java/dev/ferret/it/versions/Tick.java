package dev.ferret.it.versions;

/** One tick on a tally's stream. */
public record Tick(int n) {
}
