package dev.ferret.it.pg;

/** One reading of a meter; its note may hold tabs, line breaks and backslashes. */
public record Reading(long value, String note) {
}
