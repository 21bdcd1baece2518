package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import java.util.List;
import java.util.Map;

/**
 * One page read from the log.
 *
 * @param floor    the progression it was loaded above
 * @param end      the progression the page moves the shard to once committed
 * @param events   the events the projection wants, in sequence order
 * @param unreadable events whose type could not be resolved
 * @param tenantNumbers for a tenant's page, each event's number in its tenant's own sequence, by store-wide sequence;
 *                 empty otherwise
 * @param rows     the rows of the log the page read, wanted or not: as many as it asked for when the shard is behind
 */
record LoadedPage(long floor, long end, List<EventEnvelope> events, List<DeadLetter> unreadable,
                  Map<Long, Long> tenantNumbers, int rows) {
}
