package dev.ferret.runtime.dialect;

/**
 * The statements of stream archiving and compacting. A stream's events move between the live table and the archive table with
 * their sequence numbers, while the stream's row is locked by {@code markStream} (run first), so no append to the
 * stream commits between a copy and its delete.
 *
 * @param markStream           (archived, tenant_id, id) -&gt; rows updated: sets the stream's archived mark and locks
 *                             its row until the transaction ends; 0 when the stream does not exist
 * @param copyToArchive        (tenant_id, stream_id): copies the stream's live events into the archive
 * @param deleteFromLive       (tenant_id, stream_id): deletes them from the live table
 * @param copyMarkersToArchive (tenant_id, stream_id, marker type): copies the stream's live events of one type (the
 *                             archiving markers) into the archive
 * @param deleteMarkersFromLive (tenant_id, stream_id, marker type): deletes them from the live table
 * @param copyToLive           (tenant_id, stream_id, marker type): copies the stream's archived events but the
 *                             markers back, with their sequence numbers
 * @param deleteFromArchive    (tenant_id, stream_id, marker type): deletes them from the archive
 * @param selectStreamWithArchived (tenant_id, stream_id, tenant_id, stream_id) -&gt; the event columns of
 *                             {@link EventSql#selectStreamEvents}, live and archived, in version order
 * @param lockStream           (tenant_id, id) -&gt; rows updated: locks the stream's row until the transaction ends,
 *                             changing nothing; 0 when the stream does not exist
 * @param selectThrough        (tenant_id, stream_id, version) -&gt; the event columns of the stream's live events up
 *                             to that version, in version order
 * @param copyReplacedToArchive (tenant_id, stream_id, version, compacted type): copies the live events up to that
 *                             version into the archive, but earlier snapshots (whose originals are there already)
 * @param deleteReplaced       (tenant_id, stream_id, version): deletes the live events below that version
 * @param replaceWithSnapshot  (id, type, data, tenant_id, stream_id, version): turns the live event at that version
 *                             into the snapshot, keeping its numbers and timestamp
 */
public record ArchiveSql(String markStream, String copyToArchive, String deleteFromLive,
                         String copyMarkersToArchive, String deleteMarkersFromLive, String copyToLive,
                         String deleteFromArchive, String selectStreamWithArchived, String lockStream,
                         String selectThrough, String copyReplacedToArchive, String deleteReplaced,
                         String replaceWithSnapshot) {

    /** Every column of an event row, the sequence number first. */
    static final String ROW = "seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
            + " correlation_id, causation_id, headers";
    /** The columns an event is read with (as {@link EventSql#selectStreamEvents}). */
    static final String READ = "seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id,"
            + " causation_id, headers";

    /**
     * The statements for engines whose identity column takes explicit values (H2, PostgreSQL); {@code json} is how
     * the engine takes a JSON text parameter.
     */
    public static ArchiveSql portable(TableNames t, String json) {
        return new ArchiveSql(
                "UPDATE " + t.streams() + " SET archived = ? WHERE tenant_id = ? AND id = ?",
                copy(t.events(), t.eventsArchive(), ""),
                "DELETE FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ?",
                copy(t.events(), t.eventsArchive(), MARKERS),
                "DELETE FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ?" + MARKERS,
                copy(t.eventsArchive(), t.events(), NOT_MARKERS),
                "DELETE FROM " + t.eventsArchive() + " WHERE tenant_id = ? AND stream_id = ?" + NOT_MARKERS,
                withArchived(t), lockStream(t), selectThrough(t), copyReplaced(t), deleteReplaced(t),
                replaceWithSnapshot(t, json));
    }

    /** The rows of the marker type bound last. */
    public static final String MARKERS = " AND type = ?";
    /** The rows of any other type. */
    public static final String NOT_MARKERS = " AND type <> ?";

    /** Copies a stream's rows ({@code which} of them) from {@code from} into {@code to}, every column as it is. */
    public static String copy(String from, String to, String which) {
        return "INSERT INTO " + to + " (" + ROW + ") SELECT " + ROW + " FROM " + from
                + " WHERE tenant_id = ? AND stream_id = ?" + which;
    }

    public static String lockStream(TableNames t) {
        return "UPDATE " + t.streams() + " SET version = version WHERE tenant_id = ? AND id = ?";
    }

    public static String selectThrough(TableNames t) {
        return "SELECT " + READ + " FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ? AND version <= ?"
                + " ORDER BY version";
    }

    public static String copyReplaced(TableNames t) {
        return copy(t.events(), t.eventsArchive(), " AND version <= ?" + NOT_MARKERS);
    }

    public static String deleteReplaced(TableNames t) {
        return "DELETE FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ? AND version < ?";
    }

    public static String replaceWithSnapshot(TableNames t, String json) {
        return "UPDATE " + t.events() + " SET id = ?, type = ?, data = " + json + ", correlation_id = NULL,"
                + " causation_id = NULL, headers = NULL WHERE tenant_id = ? AND stream_id = ? AND version = ?";
    }

    /** A stream's live and archived events, in version order. */
    public static String withArchived(TableNames t) {
        return "SELECT " + READ + " FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ?"
                + " UNION ALL SELECT " + READ + " FROM " + t.eventsArchive() + " WHERE tenant_id = ? AND stream_id = ?"
                + " ORDER BY version";
    }
}
