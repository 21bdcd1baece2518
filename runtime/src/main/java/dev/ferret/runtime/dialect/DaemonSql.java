package dev.ferret.runtime.dialect;

/**
 * Every statement the async daemon issues.
 *
 * @param highWaterMark      (mark, mark) -&gt; gap_at, after_gap, highest: one consistent read of the log above the
 *                           current mark. {@code gap_at} is the last sequence before the first hole (null when
 *                           there is none), {@code after_gap} the first sequence after it, {@code highest} the
 *                           highest sequence (the mark itself when the log has nothing above it)
 * @param listGaps           (mark, mark) -&gt; before, after for each hole above the mark, in order
 * @param loadPage           (floor, mark, limit) -&gt; event rows in sequence order
 * @param tenantMarks        () -&gt; tenant_id, last_seq: each tenant's committed sequence, which is its high water
 *                           mark (the numbers are drawn under a row lock inside the append, so they have no holes)
 * @param loadTenantPage     (tenant_id, floor, mark, limit) -&gt; event rows and tenant_seq, in tenant_seq order
 * @param selectProgression  (name) -&gt; last_seq_id
 * @param selectProgressionStamp (name) -&gt; last_seq_id, last_updated: read back on a fresh connection to learn
 *                           whether a page whose commit reported a failure committed
 * @param advanceProgression (name, floor, new last_seq_id, last_updated): moves the row only if it is at
 *                           {@code floor} (or creates it when {@code floor} is 0); one row affected or none
 * @param raiseMark          (name, last_seq_id, last_updated): creates the row or raises it, never lowers it
 * @param deleteProgression  (name)
 * @param insertDeadLetter   (projection, seq_id, event_id, type, tenant_id, exception_type, message, timestamp)
 * @param listNodes          () -&gt; name, last beat in epoch millis: every HotCold node's heartbeat row
 * @param deleteDeadNodes    (heartbeat cut-off in epoch millis) removes the heartbeat rows of HotCold nodes gone
 *                           that long
 * @param countLiveNodes     (heartbeat cut-off in epoch millis) -&gt; HotCold nodes whose heartbeat row (a
 *                           progression row {@code ~node:<id>} holding its last beat) is newer
 * @param countSequences     (from, to) -&gt; how many committed events have a sequence in that range: the detector's
 *                           re-read after it claimed a hole, which sees an owner that committed before the claim
 * @param claimSequences     (from, to, owner lock key or name) -&gt; how many of those locks were held (0: all taken): takes the owner lock
 *                           of each sequence of a hole without waiting, in the detector's transaction; any held lock
 *                           means the hole's owner is still open (empty where the dialect keeps owners in memory)
 * @param selectEveryProgression () -&gt; name, last_seq_id of every row: read once per database as a SOLO daemon
 *                           starts, so that its shards start without a read each
 */
public record DaemonSql(String highWaterMark, String listGaps, String loadPage, String tenantMarks,
                        String loadTenantPage, String selectProgression, String selectProgressionStamp,
                        String advanceProgression, String raiseMark, String deleteProgression,
                        String insertDeadLetter, String countLiveNodes, String listNodes,
                        String deleteDeadNodes, String countSequences, String claimSequences,
                        String selectEveryProgression) {

    /**
     * How a HotCold node's heartbeat row is named in the progression table: {@code ~} cannot start a projection's
     * or a subscription's name, so no shard's progression row ever matches the heartbeat statements.
     */
    public static final String HEARTBEAT_ROW_PREFIX = "~node:";
}
