package dev.ferret.runtime.dialect;

/**
 * Every statement the event store issues, rendered once per store for one schema and prefix.
 *
 * @param insertStream          (id, tenant_id, type, version, timestamp, created): a new stream; a duplicate key
 *                              means it exists
 * @param upsertStream          (id, tenant_id, type, count, timestamp, created) -&gt; the new version: adds {@code count} events
 *                              to the stream, creating it when missing
 * @param upsertStreamsOfMany   (tenant_id, timestamp, created, ids, types, counts) -&gt; id, version:
 *                              {@code upsertStream} for several distinct streams in one statement, the last three
 *                              bound as the columns (id, type, n) of {@link Dialect#bindColumns}: three arrays, or
 *                              on SQL Server one JSON parameter
 * @param advanceStream         (new version, timestamp, tenant_id, id, expected version): moves a stream only if it
 *                              is at the expected version; one row updated or none
 * @param selectStream          (tenant_id, id) -&gt; version, type, timestamp, archived
 * @param nextTenantSequence    (tenant_id, count, timestamp) -&gt; the tenant's new last number: draws {@code count}
 *                              numbers of the tenant's event sequence, creating its row at the first append; the
 *                              row stays locked until the append transaction ends, so a tenant's numbers are
 *                              gap-free and commit in order
 * @param insertEvent           (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq or null,
 *                              correlation_id, causation_id, headers: each null when the event has none)
 * @param insertEventsOfMany    (timestamp, tenant_id, then ids, stream ids, versions, types, data, tenant_seqs,
 *                              correlation ids, causation ids, headers as the columns of {@link Dialect#bindColumns},
 *                              ids and JSON as text): {@code insertEvent} for every event of a unit of work in one
 *                              statement, numbered in the rows' order (a unit of work of one event is one
 *                              {@code insertEvent})
 * @param selectStreamEvents    (tenant_id, stream_id) -&gt; the event columns (seq_id, id, stream_id, version, type,
 *                              data, timestamp, tenant_id, correlation_id, causation_id, headers) in version order
 * @param selectAppendedSequences (tenant_id, stream_id, first version, last version) -&gt; seq_id in version order:
 *                              the sequence numbers one append's inserts drew, read back in its own transaction
 *                              for the inline projections. A read after the batch rather than keys returned by
 *                              it, because mssql-jdbc returns no generated keys from {@code executeBatch} and an
 *                              {@code OUTPUT} clause makes a batched statement fail; so every engine keeps its
 *                              batch and runs the one code path
 * @param ownAppendedSequences  (owner lock key or name, tenant_id, stream_id, first version, last version) -&gt;
 *                              the lowest seq_id: takes a transaction-scoped owner lock on each sequence number one
 *                              append just drew, so the detector can tell its holes from rolled-back ones (empty
 *                              where the dialect keeps owners in memory)
 * @param selectAppendedSequencesOfMany (stream ids, first versions, last versions, tenant_id) -&gt; stream_id,
 *                              version, seq_id: {@code selectAppendedSequences} for every append of a unit of work
 *                              in one statement, the ranges bound by {@link Dialect#bindAppendedRanges}
 * @param ownAppendedSequencesOfMany (owner lock key or name, the ranges of
 *                              {@link Dialect#bindAppendedRanges}, tenant_id) -&gt; the lowest seq_id:
 *                              {@code ownAppendedSequences} for every append of a unit of work in one statement
 *                              (empty where owners are in memory)
 * @param selectPassedMark      () -&gt; last_seq_id of the {@code HighWaterMark} progression row: read right after
 *                              {@code ownAppendedSequences}, a mark at or above a number the append drew means the
 *                              detector passed it before the lock was taken (empty where owners are in memory)
 * @param selectCorrelatedEvents (tenant_id, correlation_id) -&gt; the event columns in sequence order, through the
 *                              index on (tenant_id, correlation_id)
 * @param selectEventNumbers    (tenant_id, stream_id, version) -&gt; seq_id, tenant_seq: where one event stands in the
 *                              store's sequence and its tenant's, to compare with a shard's progression
 */
public record EventSql(String insertStream, String upsertStream, String upsertStreamsOfMany, String advanceStream, String selectStream,
                       String nextTenantSequence, String insertEvent, String insertEventsOfMany,
                       String selectStreamEvents,
                       String selectAppendedSequences, String ownAppendedSequences,
                       String selectAppendedSequencesOfMany, String ownAppendedSequencesOfMany,
                       String selectPassedMark, String selectCorrelatedEvents,
                       String selectEventNumbers) {
}
