package dev.ferret;

import java.time.OffsetDateTime;

/**
 * A stream's head.
 *
 * @param streamId      the stream
 * @param version       the version of its last event
 * @param aggregateType the alias given when the stream was started, or null
 * @param lastModified  when it last received events
 * @param tenantId      its tenant
 * @param archived      whether it was archived ({@link EventOperations#archiveStream}) and not brought back since
 */
public record StreamState(String streamId, long version, String aggregateType, OffsetDateTime lastModified,
                          String tenantId, boolean archived) {

    /** A stream that is not archived. */
    public StreamState(String streamId, long version, String aggregateType, OffsetDateTime lastModified,
                       String tenantId) {
        this(streamId, version, aggregateType, lastModified, tenantId, false);
    }
}
