package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import java.util.List;

/**
 * One page read from the log.
 *
 * @param floor    the progression it was loaded above
 * @param end      the progression the page moves the shard to once committed
 * @param events   the events the projection wants, in sequence order
 * @param unreadable events whose type could not be resolved
 */
record LoadedPage(long floor, long end, List<EventEnvelope> events, List<DeadLetter> unreadable) {
}
