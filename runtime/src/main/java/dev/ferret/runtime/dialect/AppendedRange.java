package dev.ferret.runtime.dialect;

/**
 * The versions one append of a unit of work wrote to one stream, {@code firstVersion} to {@code lastVersion}
 * inclusive: with the tenant, they name the event rows it inserted through the events' unique key.
 */
public record AppendedRange(String streamId, long firstVersion, long lastVersion) {
}
