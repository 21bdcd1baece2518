package dev.ferret.runtime.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** The check every engine with database owner locks makes right after an append took them. */
public final class SequenceOwnership {

    private SequenceOwnership() {
    }

    /**
     * Fails when the persisted high water mark is at or above {@code lowest}, the lowest number the append drew. No
     * committed row can be at or above a number still uncommitted without a hole below it, so such a mark can only
     * have come from the detector passing that hole, which it did while holding the number's owner lock; the
     * append's own lock was granted after that commit, so this read sees it.
     */
    public static void requireNotPassed(Connection connection, EventSql sql, long lowest) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql.selectPassedMark());
             ResultSet rs = ps.executeQuery()) {
            requireNotPassed(lowest, rs);
        }
    }

    /** As {@link #requireNotPassed(Connection, EventSql, long)}, given the result of {@code selectPassedMark}. */
    public static void requireNotPassed(long lowest, ResultSet mark) throws SQLException {
        if (mark.next() && mark.getLong(1) >= lowest) {
            throw new SequencesPassedException(lowest, mark.getLong(1));
        }
    }
}
