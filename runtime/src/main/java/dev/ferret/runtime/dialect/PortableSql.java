package dev.ferret.runtime.dialect;

/**
 * The statements all three engines write alike, in standard SQL, so each dialect does not spell them again; what
 * differs per engine (upserts, paging, JSON, locks) stays in the dialect.
 */
public final class PortableSql {

    private PortableSql() {
    }

    /**
     * {@code (mark, mark)}: rows of seq_id and the next seq_id above it, over the {@code LEAD()} window. The mark
     * itself is the first candidate, so a hole directly above it is seen as a gap too.
     */
    public static String over(String eventsTable) {
        return "SELECT seq_id, LEAD(seq_id) OVER (ORDER BY seq_id) AS next_seq FROM ("
                + "SELECT CAST(? AS BIGINT) AS seq_id UNION ALL SELECT seq_id FROM " + eventsTable
                + " WHERE seq_id > ?) AS candidates";
    }

    public static String highWaterMark(String eventsTable) {
        return "SELECT MIN(CASE WHEN next_seq > seq_id + 1 THEN seq_id END) AS gap_at,"
                + " MIN(CASE WHEN next_seq > seq_id + 1 THEN next_seq END) AS after_gap,"
                + " MAX(seq_id) AS highest FROM (" + over(eventsTable) + ") AS ordered";
    }

    public static String countSequences(String eventsTable) {
        return "SELECT COUNT(*) FROM " + eventsTable + " WHERE seq_id >= ? AND seq_id <= ?";
    }

    public static String listGaps(String eventsTable) {
        return "SELECT seq_id AS before_gap, next_seq AS after_gap FROM (" + over(eventsTable) + ") AS ordered"
                + " WHERE next_seq > seq_id + 1 ORDER BY seq_id";
    }

    /** See {@link EventSql#selectAppendedSequences()}; the stream's unique version key finds the rows. */
    public static String selectAppendedSequences(TableNames t) {
        return "SELECT seq_id FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ? AND version >= ?"
                + " AND version <= ? ORDER BY version";
    }

    /** Tenants missing from the answer keep the mark they had (SQL Server skips a row an append holds). */
    public static String tenantMarks(TableNames t) {
        return "SELECT tenant_id, last_seq FROM " + t.tenantSequences();
    }

    /** See {@link EventSql#selectPassedMark()}; the row's name is the detector's, fixed. */
    public static String selectPassedMark(TableNames t) {
        return "SELECT last_seq_id FROM " + t.progression() + " WHERE name = 'HighWaterMark'";
    }

    /** (tenant_id, stream_id, version) -&gt; seq_id, tenant_seq of that one event. */
    public static String selectEventNumbers(TableNames t) {
        return "SELECT seq_id, tenant_seq FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ? AND version = ?";
    }

    public static String selectProgression(TableNames t) {
        return "SELECT last_seq_id FROM " + t.progression() + " WHERE name = ?";
    }

    /** See {@link DaemonSql#selectEveryProgression()}. */
    public static String selectEveryProgression(TableNames t) {
        return "SELECT name, last_seq_id FROM " + t.progression();
    }

    public static String selectProgressionStamp(TableNames t) {
        return "SELECT last_seq_id, last_updated FROM " + t.progression() + " WHERE name = ?";
    }

    /** The heartbeat row holds the beat in epoch millis, so one cut-off serves counting and cleaning. */
    public static String deleteDeadNodes(TableNames t) {
        return "DELETE FROM " + t.progression() + " WHERE name LIKE '" + DaemonSql.HEARTBEAT_ROW_PREFIX
                + "%' AND last_seq_id < ?";
    }

    public static String deleteProgression(TableNames t) {
        return "DELETE FROM " + t.progression() + " WHERE name = ?";
    }

    public static String insertDeadLetter(TableNames t) {
        return "INSERT INTO " + t.deadLetters() + " (projection, seq_id, event_id, type, tenant_id, exception_type,"
                + " message, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /** Every HotCold node's heartbeat row: its name and last beat in epoch millis. */
    public static String listNodes(TableNames t) {
        return "SELECT name, last_seq_id FROM " + t.progression() + " WHERE name LIKE '"
                + DaemonSql.HEARTBEAT_ROW_PREFIX + "%'";
    }

    public static String countLiveNodes(TableNames t) {
        return "SELECT COUNT(*) FROM " + t.progression() + " WHERE name LIKE '" + DaemonSql.HEARTBEAT_ROW_PREFIX
                + "%' AND last_seq_id > ?";
    }
}
