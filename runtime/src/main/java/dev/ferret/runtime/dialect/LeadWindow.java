package dev.ferret.runtime.dialect;

/**
 * The {@code LEAD()} window over the event log above the mark that all three engines share. The mark itself is
 * the first candidate, so a hole directly above it is seen as a gap too.
 */
public final class LeadWindow {

    private LeadWindow() {
    }

    /** {@code (mark, mark)}: rows of seq_id and the next seq_id above it. */
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

    public static String listGaps(String eventsTable) {
        return "SELECT seq_id AS before_gap, next_seq AS after_gap FROM (" + over(eventsTable) + ") AS ordered"
                + " WHERE next_seq > seq_id + 1 ORDER BY seq_id";
    }
}
