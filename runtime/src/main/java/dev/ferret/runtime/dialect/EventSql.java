package dev.ferret.runtime.dialect;

/**
 * Every statement the event store issues, rendered once per store for one schema and prefix.
 *
 * @param insertStream          (id, tenant_id, type, version, timestamp, created): a new stream; a duplicate key
 *                              means it exists
 * @param upsertStream          (id, tenant_id, type, count, timestamp, created) -&gt; the new version: adds {@code count} events
 *                              to the stream, creating it when missing
 * @param advanceStream         (new version, timestamp, tenant_id, id, expected version): moves a stream only if it
 *                              is at the expected version; one row updated or none
 * @param selectStream          (tenant_id, id) -&gt; version, type, timestamp
 * @param insertEvent           (id, stream_id, version, type, data, timestamp, tenant_id)
 * @param selectStreamEvents    (tenant_id, stream_id) -&gt; seq_id, id, stream_id, version, type, data, timestamp,
 *                              tenant_id in version order
 */
public record EventSql(String insertStream, String upsertStream, String advanceStream, String selectStream,
                       String insertEvent, String selectStreamEvents) {
}
