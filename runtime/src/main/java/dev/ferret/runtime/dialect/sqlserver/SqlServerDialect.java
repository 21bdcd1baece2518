package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.DatabaseEngine;
import dev.ferret.IdLimits;
import dev.ferret.runtime.dialect.AdvisoryLockKeys;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.dialect.ArrayColumn;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.ValueKind;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.IndexKeyLimit;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.SequenceOwnership;
import dev.ferret.runtime.dialect.ShardLockSession;
import dev.ferret.runtime.dialect.TableNames;
import java.math.BigDecimal;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;

/**
 * SQL Server: {@code NVARCHAR(MAX)} JSON checked by {@code ISJSON}, {@code DATETIMEOFFSET}, {@code IDENTITY},
 * {@code MERGE ... WITH (HOLDLOCK)} upserts, {@code OPENJSON} id lists and unit-of-work rows, and {@code sp_getapplock}.
 */
public final class SqlServerDialect implements Dialect {

    /**
     * OPENJSON, which id lists, the shard lock probe and the statements of a whole unit of work use, exists only at
     * this compatibility level and above: the store refuses a lower one at start ({@link ServerReport}) rather than
     * keep a per-event path for it.
     */
    static final int MIN_COMPATIBILITY_LEVEL = 130;

    /** mssql-jdbc's {@code SQLServerConnection.TRANSACTION_SNAPSHOT}. */
    static final int TRANSACTION_SNAPSHOT = 0x1000;

    private static final int SHARD_LOCK_NAME_LENGTH = 255;

    /** Violation of a PRIMARY KEY or UNIQUE constraint, and of a unique index. */
    private static final int PRIMARY_KEY_VIOLATION = 2627;
    private static final int UNIQUE_INDEX_VIOLATION = 2601;

    /**
     * The collation of every key column: a binary one (code-point comparison), so that ids which differ only in
     * case are different rows, as on PostgreSQL and H2, whatever the database's default collation is. A column
     * reference carries its collation (label Implicit), which wins over a parameter's (Coercible-default), so a
     * comparison with a bound id compares in this collation and seeks the key.
     */
    static final String KEY_COLLATION = "Latin1_General_100_BIN2";

    /**
     * Appended to a MERGE source's key column in ON: the source row's collation label is not documented for a
     * VALUES of parameters, and were it Implicit (the database's) it would conflict with the key column's; an
     * Explicit label wins over both and, being the column's own collation, keeps the seek.
     */
    static final String KEY = " COLLATE " + KEY_COLLATION;

    /** Column types of ids, from the limits the public API checks, so the two cannot drift apart. */
    static final String ID_TYPE = "NVARCHAR(" + IdLimits.MAX_ID_LENGTH + ")";
    static final String ID_COLUMN = ID_TYPE + " COLLATE " + KEY_COLLATION;
    static final String TENANT_COLUMN = "NVARCHAR(" + IdLimits.MAX_TENANT_ID_LENGTH + ") COLLATE " + KEY_COLLATION;
    static final String SHARD_NAME_COLUMN = "NVARCHAR(" + Dialect.MAX_SHARD_NAME_LENGTH + ") COLLATE "
            + KEY_COLLATION;

    /*
     * Session-owned rather than transaction-owned: under the driver's implicit transactions an EXEC opens no
     * transaction, and a transaction-owned applock outside one fails. A pooled connection keeps its session, so the
     * lock is always released explicitly.
     */
    static final String MIGRATION_LOCK = "{? = call sp_getapplock(?, 'Exclusive', 'Session', ?)}";
    static final String MIGRATION_UNLOCK = "{? = call sp_releaseapplock(?, 'Session')}";

    /** T-SQL's reserved keywords, as Microsoft's "Reserved Keywords (Transact-SQL)" lists them. */
    private static final Set<String> RESERVED_WORDS = Set.of(
            "ADD", "ALL", "ALTER", "AND", "ANY", "AS", "ASC", "AUTHORIZATION", "BACKUP", "BEGIN", "BETWEEN", "BREAK",
            "BROWSE", "BULK", "BY", "CASCADE", "CASE", "CHECK", "CHECKPOINT", "CLOSE", "CLUSTERED", "COALESCE",
            "COLLATE", "COLUMN", "COMMIT", "COMPUTE", "CONSTRAINT", "CONTAINS", "CONTAINSTABLE", "CONTINUE",
            "CONVERT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
            "CURRENT_USER", "CURSOR", "DATABASE", "DBCC", "DEALLOCATE", "DECLARE", "DEFAULT", "DELETE", "DENY",
            "DESC", "DISK", "DISTINCT", "DISTRIBUTED", "DOUBLE", "DROP", "DUMP", "ELSE", "END", "ERRLVL", "ESCAPE",
            "EXCEPT", "EXEC", "EXECUTE", "EXISTS", "EXIT", "EXTERNAL", "FETCH", "FILE", "FILLFACTOR", "FOR",
            "FOREIGN", "FREETEXT", "FREETEXTTABLE", "FROM", "FULL", "FUNCTION", "GOTO", "GRANT", "GROUP", "HAVING",
            "HOLDLOCK", "IDENTITY", "IDENTITYCOL", "IDENTITY_INSERT", "IF", "IN", "INDEX", "INNER", "INSERT",
            "INTERSECT", "INTO", "IS", "JOIN", "KEY", "KILL", "LEFT", "LIKE", "LINENO", "LOAD", "MERGE", "NATIONAL",
            "NOCHECK", "NONCLUSTERED", "NOT", "NULL", "NULLIF", "OF", "OFF", "OFFSETS", "ON", "OPEN",
            "OPENDATASOURCE", "OPENQUERY", "OPENROWSET", "OPENXML", "OPTION", "OR", "ORDER", "OUTER", "OVER",
            "PERCENT", "PIVOT", "PLAN", "PRECISION", "PRIMARY", "PRINT", "PROC", "PROCEDURE", "PUBLIC", "RAISERROR",
            "READ", "READTEXT", "RECONFIGURE", "REFERENCES", "REPLICATION", "RESTORE", "RESTRICT", "RETURN",
            "REVERT", "REVOKE", "RIGHT", "ROLLBACK", "ROWCOUNT", "ROWGUIDCOL", "RULE", "SAVE", "SCHEMA",
            "SECURITYAUDIT", "SELECT", "SEMANTICKEYPHRASETABLE", "SEMANTICSIMILARITYDETAILSTABLE",
            "SEMANTICSIMILARITYTABLE", "SESSION_USER", "SET", "SETUSER", "SHUTDOWN", "SOME", "STATISTICS",
            "SYSTEM_USER", "TABLE", "TABLESAMPLE", "TEXTSIZE", "THEN", "TO", "TOP", "TRAN", "TRANSACTION", "TRIGGER",
            "TRUNCATE", "TRY_CONVERT", "TSEQUAL", "UNION", "UNIQUE", "UNPIVOT", "UPDATE", "UPDATETEXT", "USE",
            "USER", "VALUES", "VARYING", "VIEW", "WAITFOR", "WHEN", "WHERE", "WHILE", "WITH", "WRITETEXT");

    @Override
    public Set<String> reservedWords() {
        return RESERVED_WORDS;
    }

    @Override
    public DatabaseEngine engine() {
        return DatabaseEngine.SQL_SERVER;
    }

    @Override
    public String defaultSchema() {
        return "dbo";
    }

    @Override
    public SchemaSql schemaSql(TableNames t) {
        return SqlServerSchema.of(t);
    }

    @Override
    public SchemaObject documentTable(TableNames t, String documentName) {
        return SqlServerDocuments.table(t, documentName);
    }

    @Override
    public EventSql eventSql(TableNames t) {
        return SqlServerEvents.statements(t);
    }

    @Override
    public ArchiveSql archiveSql(TableNames t) {
        return SqlServerArchive.statements(t);
    }

    @Override
    public DocumentSql documentSql(TableNames t, String documentName) {
        return SqlServerDocuments.statements(t, documentName);
    }

    @Override
    public OutboxSql outboxSql(TableNames t) {
        // SQL Server keeps JSON as NVARCHAR: the text goes in and comes out as it is
        // ORDER BY in a subquery is valid with OFFSET ... FETCH; a batch stays under the 5,000 locks of escalation
        return OutboxSql.of(t, "?", "payload", OutboxSql.deleteDeliveredBatch(t));
    }

    @Override
    public DaemonSql daemonSql(TableNames t) {
        return SqlServerDaemonStatements.statements(t);
    }

    /** What every owner lock's resource name starts with; the sequence number follows. */
    static String sequenceOwnerPrefix(TableNames names) {
        return Dialect.sequenceOwnerName(names) + ":";
    }

    /** Every append of the unit of work in one batch: one round trip, however many streams it wrote. */
    @Override
    public Runnable ownAppendedSequences(Connection connection, TableNames names, EventSql sql, String tenantId,
                                         List<AppendedRange> ranges) throws SQLException {
        long lowest;
        try (PreparedStatement ps = connection.prepareStatement(sql.ownAppendedSequencesOfMany())) {
            ps.setString(1, sequenceOwnerPrefix(names));
            ps.setString(bindAppendedRanges(connection, ps, 2, ranges), tenantId);
            lowest = singleLong(ps);
        }
        // a statement after the locks were granted: it sees a mark a detector committed while holding one of them
        SequenceOwnership.requireNotPassed(connection, sql, lowest);
        return () -> { };
    }

    /** All the rows as one JSON parameter for OPENJSON ({@link JsonRows}): mssql-jdbc takes no array parameter. */
    @Override
    public int bindColumns(Connection connection, PreparedStatement statement, int index, List<ArrayColumn> columns)
            throws SQLException {
        // sent as nvarchar(max) past 4,000 characters: the JSON is never cut, and startup refuses a driver that
        // would send it as varchar
        statement.setString(index, JsonRows.of(columns));
        return index + 1;
    }

    @Override
    public boolean tryClaimSequences(Connection connection, TableNames names, DaemonSql sql, long from, long to)
            throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql.claimSequences())) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            ps.setString(3, sequenceOwnerPrefix(names));
            return singleLong(ps) == 0;
        }
    }

    /** The one value of a T-SQL batch's final SELECT, past any update counts its other statements report. */
    private static long singleLong(PreparedStatement ps) throws SQLException {
        boolean isResultSet = ps.execute();
        while (!isResultSet && ps.getUpdateCount() != -1) {
            isResultSet = ps.getMoreResults();
        }
        if (!isResultSet) {
            throw new SQLException("the batch returned no result set");
        }
        try (ResultSet rs = ps.getResultSet()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Server version and edition; the current database's compatibility level, READ_COMMITTED_SNAPSHOT and
     * snapshot isolation (a connection always sees its own database's row of sys.databases); the collation the key
     * columns really have (a table made before they were binary keeps its old one); and the type the driver gives a
     * text parameter ({@code varchar} under {@code sendStringParametersAsUnicode=false}).
     */
    @Override
    public String serverReportSql(TableNames t) {
        return "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128)) AS product_version,"
                + " CAST(SERVERPROPERTY('Edition') AS NVARCHAR(128)) AS edition, d.name, d.compatibility_level,"
                + " d.is_read_committed_snapshot_on, d.snapshot_isolation_state_desc,"
                + " (SELECT c.collation_name FROM sys.columns AS c WHERE c.object_id = OBJECT_ID(N'" + t.events()
                + "') AND c.name = N'stream_id') AS key_collation,"
                + " CAST(SQL_VARIANT_PROPERTY(?, 'BaseType') AS NVARCHAR(128)) AS text_parameter_type"
                + " FROM sys.databases AS d WHERE d.database_id = DB_ID()";
    }

    @Override
    public void checkServer(Connection connection, TableNames names) throws SQLException {
        ServerReport.read(connection, serverReportSql(names)).check();
    }

    /** Deadlock victim, lock request timeout, and the Azure SQL transient connection errors. */
    private static final Set<Integer> TRANSIENT_ERRORS = Set.of(1205, 1222, -2, 4060, 40197,
            40501, 40613, 49918, 49919, 49920, 4221, 233, 10053, 10054, 10060);

    @Override
    public boolean isTransient(SQLException e) {
        return Dialect.super.isTransient(e) || TRANSIENT_ERRORS.contains(e.getErrorCode());
    }

    /**
     * sp_getapplock's {@code @Resource} (and APPLOCK_MODE's) is {@code nvarchar(255)}: a longer name is cut to 255
     * without an error, so two shards whose lock names share those characters would share one lock.
     */
    @Override
    public int maxShardLockNameLength() {
        return SHARD_LOCK_NAME_LENGTH;
    }

    /**
     * A nonclustered index key holds at most 1,700 bytes (CREATE INDEX, "Maximum key size"); text is nvarchar, two
     * bytes a UTF-16 unit; a number is DECIMAL(38, 10) (17 bytes, below 10^28), a point in time DATETIMEOFFSET(7)
     * (10 bytes).
     */
    private static final IndexKeyLimit INDEX_KEY_LIMIT = new IndexKeyLimit("SQL Server", 1_700, true, 17, 10,
            BigDecimal.TEN.pow(28));

    @Override
    public IndexKeyLimit indexKeyLimit() {
        return INDEX_KEY_LIMIT;
    }

    @Override
    public ShardLockSession openShardLocks(DataSource dataSource, TableNames names) throws SQLException {
        return new SqlServerShardLocks(dataSource);
    }

    @Override
    public DocumentIndexSql documentIndex(TableNames names, String documentName, String indexName,
                                          List<DocumentIndexSql.Key> keys, boolean unique) {
        return SqlServerDocuments.index(names, documentName, indexName, keys, unique);
    }

    @Override
    public String jsonText(TableNames names, List<String> path) {
        return SqlServerDocuments.text(path);
    }

    @Override
    public String jsonValue(TableNames names, List<String> path, ValueKind kind) {
        return SqlServerDocuments.value(path, kind);
    }

    @Override
    public String jsonNumber(TableNames names, List<String> path) {
        return SqlServerDocuments.number(path);
    }

    @Override
    public String jsonTimestamp(TableNames names, List<String> path) {
        return SqlServerDocuments.timestamp(path);
    }

    @Override
    public String existingIndexesSql() {
        return "SELECT i.name FROM sys.indexes i JOIN sys.tables t ON t.object_id = i.object_id"
                + " WHERE SCHEMA_NAME(t.schema_id) = ? AND i.name IS NOT NULL";
    }

    @Override
    public boolean pagesWithOffsetFetch() {
        return true;
    }

    @Override
    public void bindIds(Connection connection, PreparedStatement statement, int index, List<String> ids)
            throws SQLException {
        statement.setString(index, jsonArrayOf(ids));
    }

    static String jsonArrayOf(List<String> values) {
        StringBuilder json = new StringBuilder(values.size() * 40).append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                json.append(',');
            }
            JsonRows.appendString(json, values.get(i));
        }
        return json.append(']').toString();
    }

    @Override
    public void bindUuid(PreparedStatement statement, int index, UUID id) throws SQLException {
        statement.setString(index, id.toString());
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return e.getErrorCode() == PRIMARY_KEY_VIOLATION || e.getErrorCode() == UNIQUE_INDEX_VIOLATION;
    }

    @Override
    public MigrationLock lockForMigration(Connection connection, String schema, Duration timeout)
            throws SQLException {
        String resource = AdvisoryLockKeys.migrationLockName(schema);
        try (CallableStatement call = connection.prepareCall(MIGRATION_LOCK)) {
            call.registerOutParameter(1, Types.INTEGER);
            call.setString(2, resource);
            call.setInt(3, (int) Math.min(Integer.MAX_VALUE, Math.max(0, timeout.toMillis())));
            call.execute();
            int result = call.getInt(1);
            if (result < 0) {
                throw new SQLException("sp_getapplock on '" + resource + "' returned " + result
                        + " (-1 timeout, -2 cancelled, -3 deadlock victim, -999 error)");
            }
        }
        return () -> {
            try (CallableStatement call = connection.prepareCall(MIGRATION_UNLOCK)) {
                call.registerOutParameter(1, Types.INTEGER);
                call.setString(2, resource);
                call.execute();
            } catch (SQLException e) {
                // a broken connection has lost its session, and the lock with it
                LoggerFactory.getLogger(SqlServerDialect.class).warn("Releasing applock {} failed", resource, e);
            }
        };
    }
}
