package dev.ferret.it.versions;

/** A stream's ticks as a projection version counts them: one each in version 1, a hundred each in version 2. */
public record Tally(String id, long value) {
}
