package dev.ferret.it.pg;

/** A meter's readings folded: how many, their sum, the last note. */
public record MeterTotal(String id, long readings, long total, String lastNote) {
}
