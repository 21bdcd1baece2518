package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.ConfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a store finds on a SQL Server at start ({@link SqlServerDialect#serverReportSql}), logged as one line, and
 * the settings it refuses, each naming the fix.
 */
record ServerReport(String version, String edition, String database, int compatibilityLevel,
        boolean readCommittedSnapshot, String snapshotIsolation, String keyCollation, String textParameterType,
        int poolIsolation) {

    String line() {
        return "SQL Server " + version + " (" + edition + "), database " + database + ": compatibility level "
                + compatibilityLevel + ", READ_COMMITTED_SNAPSHOT " + (readCommittedSnapshot ? "ON" : "OFF")
                + ", snapshot isolation " + snapshotIsolation + ", key-column collation " + keyCollation
                + ", text parameters " + textParameterType + ", pool isolation " + isolationName(poolIsolation);
    }

    /** Reads the report on {@code connection} with {@code sql}. */
    static ServerReport read(Connection connection, String sql) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.setString(1, "Ferret");
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("sys.databases has no row for the current database");
                }
                return new ServerReport(rs.getString("product_version"), rs.getString("edition"),
                        rs.getString("name"), rs.getInt("compatibility_level"),
                        rs.getBoolean("is_read_committed_snapshot_on"), rs.getString("snapshot_isolation_state_desc"),
                        rs.getString("key_collation"), rs.getString("text_parameter_type"),
                        connection.getTransactionIsolation());
            }
        }
    }

    static String isolationName(int level) {
        return switch (level) {
            case Connection.TRANSACTION_READ_UNCOMMITTED -> "READ_UNCOMMITTED";
            case Connection.TRANSACTION_READ_COMMITTED -> "READ_COMMITTED";
            case Connection.TRANSACTION_REPEATABLE_READ -> "REPEATABLE_READ";
            case Connection.TRANSACTION_SERIALIZABLE -> "SERIALIZABLE";
            case SqlServerDialect.TRANSACTION_SNAPSHOT -> "SNAPSHOT";
            default -> String.valueOf(level);
        };
    }

    /** Logs the report and refuses what Ferret cannot work with, naming the setting and the fix. */
    void check() {
        Logger log = LoggerFactory.getLogger(SqlServerDialect.class);
        log.info(line());
        if (compatibilityLevel() < SqlServerDialect.MIN_COMPATIBILITY_LEVEL) {
            throw new ConfigurationException("SQL Server database " + database()
                    + " is at compatibility level " + compatibilityLevel() + "; Ferret needs "
                    + SqlServerDialect.MIN_COMPATIBILITY_LEVEL + " or higher for OPENJSON (id lists, the shard lock"
                    + " probe, the appends of a unit of work). Fix: ALTER DATABASE [" + database()
                    + "] SET COMPATIBILITY_LEVEL = " + SqlServerDialect.MIN_COMPATIBILITY_LEVEL + " (or higher)");
        }
        if (!"nvarchar".equalsIgnoreCase(textParameterType())) {
            throw new ConfigurationException("The driver sends text parameters to SQL Server as "
                    + textParameterType() + ", not nvarchar (sendStringParametersAsUnicode=false?): text"
                    + " outside the database's code page would be stored as '?'. Fix: remove"
                    + " sendStringParametersAsUnicode=false from the connection URL or data source properties");
        }
        // READPAST (high-water mark, gaps, tenant marks) is allowed only under READ COMMITTED and REPEATABLE READ
        // (table hints: error 650 otherwise), and READ UNCOMMITTED would see appends that later roll back: the
        // daemon reads on pool connections
        if (poolIsolation() == Connection.TRANSACTION_SERIALIZABLE
                || poolIsolation() == SqlServerDialect.TRANSACTION_SNAPSHOT
                || poolIsolation() == Connection.TRANSACTION_READ_UNCOMMITTED) {
            throw new ConfigurationException("The data source's connections start at isolation level "
                    + isolationName(poolIsolation()) + "; Ferret's daemon reads with READPAST, which SQL"
                    + " Server allows only under READ COMMITTED or REPEATABLE READ. Fix: set the pool's default"
                    + " transaction isolation to READ_COMMITTED (READ_COMMITTED_SNAPSHOT ON is fine)");
        }
        // Key columns in another collation come from a snapshot before 0.1.0: ids that differ only in case would be
        // one id there, and every statement's "COLLATE Latin1_General_100_BIN2" comparison would scan instead of
        // seek (MERGE on the primary key included). Such tables are refused rather than served slowly and wrongly.
        if (keyCollation() != null && !SqlServerDialect.KEY_COLLATION.equalsIgnoreCase(keyCollation())) {
            throw new ConfigurationException("The key columns of Ferret's tables in SQL Server database "
                    + database() + " have collation " + keyCollation() + ", not " + SqlServerDialect.KEY_COLLATION
                    + ": they were made by a Ferret snapshot before 0.1.0. Ids that differ only in case would be one"
                    + " id there, and the key lookups would scan the tables. Fix: copy the events and documents out,"
                    + " drop Ferret's tables of this schema, start once with apply-all-database-changes-on-startup"
                    + " so that they are created with binary keys, and copy the data back");
        }
    }
}
