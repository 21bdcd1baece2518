package dev.ferret.runtime.events;

import dev.ferret.EventMetadata;
import java.util.List;

/** One buffered append: its stream, what version it expects, and its events in call order. */
record StreamAppend(String streamId, long expectedVersion, String aggregateType, boolean start, List<?> events,
                    EventMetadata metadata) {

    /** Expected version meaning "whatever the stream is at". */
    static final long ANY_VERSION = -1;
}
