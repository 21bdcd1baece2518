package dev.ferret.runtime.testing;

import dev.ferret.DatabaseEngine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A statement's plan, read the engine's own way, for the tests that check a statement's cost follows its work: H2's
 * {@code EXPLAIN ANALYZE}, PostgreSQL's {@code EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)}, and on SQL Server, which has
 * no {@code EXPLAIN}, the actual plan XML that {@code SET STATISTICS XML ON} returns after the statement's own rows.
 */
public final class QueryPlans {

    /** Binds the statement's parameters. */
    @FunctionalInterface
    public interface Binder {
        void bind(Connection connection, PreparedStatement statement) throws SQLException;
    }

    private static final Pattern H2_SCAN_COUNT = Pattern.compile("scanCount: (\\d+)");
    /** The column SQL Server names its plan XML result set by. */
    private static final String SHOWPLAN_COLUMN = "Microsoft SQL Server 2005 XML Showplan";

    private QueryPlans() {
    }

    /** The plan of {@code sql} run with the parameters {@code binder} sets, as text (XML on SQL Server). */
    public static String of(TestDatabase db, String sql, Binder binder) throws SQLException {
        try (Connection c = db.dataSource().getConnection()) {
            if (db.engine() == DatabaseEngine.SQL_SERVER) {
                return sqlServerPlan(c, sql, binder);
            }
            String prefix = db.engine() == DatabaseEngine.POSTGRESQL ? "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
                    : "EXPLAIN ANALYZE ";
            StringBuilder plan = new StringBuilder();
            try (PreparedStatement ps = c.prepareStatement(prefix + sql)) {
                binder.bind(c, ps);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        plan.append(rs.getString(1)).append('\n');
                    }
                }
            }
            return plan.toString();
        }
    }

    /** How many rows H2's {@code EXPLAIN ANALYZE} says the statement visited, summed over its scans. */
    public static long h2RowsVisited(String plan) {
        long scanned = 0;
        Matcher m = H2_SCAN_COUNT.matcher(plan);
        while (m.find()) {
            scanned += Long.parseLong(m.group(1));
        }
        return scanned;
    }

    private static String sqlServerPlan(Connection c, String sql, Binder binder) throws SQLException {
        try (Statement session = c.createStatement()) {
            session.execute("SET STATISTICS XML ON");
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                binder.bind(c, ps);
                boolean isResultSet = ps.execute();
                while (true) {
                    if (isResultSet) {
                        try (ResultSet rs = ps.getResultSet()) {
                            if (SHOWPLAN_COLUMN.equals(rs.getMetaData().getColumnName(1)) && rs.next()) {
                                return rs.getString(1);
                            }
                        }
                    } else if (ps.getUpdateCount() == -1) {
                        throw new SQLException("SQL Server returned no plan XML for: " + sql);
                    }
                    isResultSet = ps.getMoreResults();
                }
            } finally {
                session.execute("SET STATISTICS XML OFF");
            }
        }
    }
}
