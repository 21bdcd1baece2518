package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.DatabaseEngine;
import dev.ferret.IdLimits;
import dev.ferret.runtime.dialect.AdvisoryLockKeys;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.SequenceOwnership;
import dev.ferret.runtime.dialect.ShardLockSession;
import dev.ferret.runtime.dialect.TableNames;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * SQL Server: {@code NVARCHAR(MAX)} JSON checked by {@code ISJSON}, {@code DATETIMEOFFSET}, {@code IDENTITY},
 * {@code MERGE ... WITH (HOLDLOCK)} upserts, {@code OPENJSON} id lists and {@code sp_getapplock}.
 */
public final class SqlServerDialect implements Dialect {

    /** Violation of a PRIMARY KEY or UNIQUE constraint, and of a unique index. */
    private static final int PRIMARY_KEY_VIOLATION = 2627;
    private static final int UNIQUE_INDEX_VIOLATION = 2601;

    /** Column types of ids, from the limits the public API checks, so the two cannot drift apart. */
    static final String ID_COLUMN = "NVARCHAR(" + IdLimits.MAX_ID_LENGTH + ")";
    static final String TENANT_COLUMN = "NVARCHAR(" + IdLimits.MAX_TENANT_ID_LENGTH + ")";
    private static final String SHARD_NAME_COLUMN = "NVARCHAR(" + Dialect.MAX_SHARD_NAME_LENGTH + ")";

    /*
     * Session-owned rather than transaction-owned: under the driver's implicit transactions an EXEC opens no
     * transaction, and a transaction-owned applock outside one fails. A pooled connection keeps its session, so the
     * lock is always released explicitly.
     */
    static final String MIGRATION_LOCK = "{? = call sp_getapplock(?, 'Exclusive', 'Session', ?)}";
    static final String MIGRATION_UNLOCK = "{? = call sp_releaseapplock(?, 'Session')}";

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
        SchemaObject events = new SchemaObject(t.local("events"), List.of(
                "IF OBJECT_ID(N'" + t.events() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.events() + " (\n"
                        + "  seq_id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT " + t.constraint("pk", "events")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  id UNIQUEIDENTIFIER NOT NULL,\n"
                        + "  stream_id " + ID_COLUMN + " NOT NULL,\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  type NVARCHAR(250) NOT NULL,\n"
                        + "  data NVARCHAR(MAX) NOT NULL CONSTRAINT " + t.constraint("ck", "events_data")
                        + " CHECK (ISJSON(data) = 1),\n"
                        + "  timestamp DATETIMEOFFSET NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  tenant_seq BIGINT NULL,\n"
                        + "  CONSTRAINT " + t.constraint("uq", "events_stream_version")
                        + " UNIQUE (tenant_id, stream_id, version)\n"
                        + ")",
                // filtered: SQL Server counts NULLs as equal in a unique index, and unpartitioned events have none
                "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + t.constraint("ux", "events_tenant_seq")
                        + "' AND object_id = OBJECT_ID(N'" + t.events() + "'))\n"
                        + "CREATE UNIQUE INDEX " + t.constraint("ux", "events_tenant_seq") + " ON " + t.events()
                        + " (tenant_id, tenant_seq) WHERE tenant_seq IS NOT NULL"));
        SchemaObject tenantSequences = new SchemaObject(t.local("tenant_sequences"), List.of(
                "IF OBJECT_ID(N'" + t.tenantSequences() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.tenantSequences() + " (\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL CONSTRAINT " + t.constraint("pk", "tenant_sequences")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  last_seq BIGINT NOT NULL,\n"
                        + "  last_updated DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        SchemaObject streams = new SchemaObject(t.local("streams"), List.of(
                "IF OBJECT_ID(N'" + t.streams() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.streams() + " (\n"
                        + "  id " + ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  type NVARCHAR(250) NULL,\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  timestamp DATETIMEOFFSET NOT NULL,\n"
                        + "  created DATETIMEOFFSET NOT NULL,\n"
                        + "  CONSTRAINT " + t.constraint("pk", "streams") + " PRIMARY KEY CLUSTERED (tenant_id, id)\n"
                        + ")"));
        SchemaObject progression = new SchemaObject(t.local("event_progression"), List.of(
                "IF OBJECT_ID(N'" + t.progression() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.progression() + " (\n"
                        + "  name " + SHARD_NAME_COLUMN + " NOT NULL CONSTRAINT " + t.constraint("pk", "event_progression")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  last_seq_id BIGINT NOT NULL,\n"
                        + "  last_updated DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        SchemaObject deadLetters = new SchemaObject(t.local("dead_letters"), List.of(
                "IF OBJECT_ID(N'" + t.deadLetters() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.deadLetters() + " (\n"
                        + "  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT " + t.constraint("pk", "dead_letters")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  projection " + SHARD_NAME_COLUMN + " NOT NULL,\n"
                        + "  seq_id BIGINT NOT NULL,\n"
                        + "  event_id UNIQUEIDENTIFIER NULL,\n"
                        + "  type NVARCHAR(250) NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  exception_type NVARCHAR(500) NOT NULL,\n"
                        + "  message NVARCHAR(MAX) NULL,\n"
                        + "  timestamp DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        // CREATE SCHEMA must be alone in its batch, hence EXEC
        return new SchemaSql("IF SCHEMA_ID(N'" + t.schema() + "') IS NULL EXEC(N'CREATE SCHEMA " + t.schema() + "')",
                MIGRATION_LOCK, MIGRATION_UNLOCK, List.of(events, streams, tenantSequences, progression, deadLetters));
    }

    @Override
    public SchemaObject documentTable(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new SchemaObject(t.documentTableName(documentName), List.of(
                "IF OBJECT_ID(N'" + table + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + table + " (\n"
                        + "  id " + ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  data NVARCHAR(MAX) NOT NULL CONSTRAINT " + t.constraint("ck", "doc_" + documentName)
                        + " CHECK (ISJSON(data) = 1),\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  last_modified DATETIMEOFFSET NOT NULL,\n"
                        + "  CONSTRAINT " + t.constraint("pk", "doc_" + documentName)
                        + " PRIMARY KEY CLUSTERED (tenant_id, id)\n"
                        + ")"));
    }

    @Override
    public EventSql eventSql(TableNames t) {
        return new EventSql(
                "INSERT INTO " + t.streams() + " (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (?, ?, ?, ?, ?, ?)",
                "MERGE " + t.streams() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?, ?, ?)) AS source (id, tenant_id, type, version, timestamp, created)"
                        + " ON target.tenant_id = source.tenant_id AND target.id = source.id"
                        + " WHEN MATCHED THEN UPDATE"
                        + " SET target.version = target.version + source.version, target.timestamp = source.timestamp"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (source.id, source.tenant_id, source.type, source.version, source.timestamp,"
                        + " source.created)"
                        + " OUTPUT inserted.version;",
                "UPDATE " + t.streams() + " SET version = ?, timestamp = ?"
                        + " WHERE tenant_id = ? AND id = ? AND version = ?",
                "SELECT version, type, timestamp FROM " + t.streams() + " WHERE tenant_id = ? AND id = ?",
                "MERGE " + t.tenantSequences() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?)) AS source (tenant_id, drawn, last_updated)"
                        + " ON target.tenant_id = source.tenant_id"
                        + " WHEN MATCHED THEN UPDATE SET target.last_seq = target.last_seq + source.drawn,"
                        + " target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (tenant_id, last_seq, last_updated)"
                        + " VALUES (source.tenant_id, source.drawn, source.last_updated)"
                        + " OUTPUT inserted.last_seq;",
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? ORDER BY version",
                PortableSql.selectAppendedSequences(t),
                // one transaction-owned applock per number drawn: sp_getapplock takes its resource only as a
                // constant or a variable, hence the name built into @resource first
                "SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = ?, @seq bigint, @lowest bigint,"
                        + " @resource nvarchar(255), @result int;"
                        + " DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR SELECT seq_id FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? AND version >= ? AND version <= ?;"
                        + " OPEN drawn; FETCH NEXT FROM drawn INTO @seq;"
                        + " WHILE @@FETCH_STATUS = 0 BEGIN"
                        + " IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq;"
                        + " SET @resource = CONCAT(@prefix, @seq);"
                        + " EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive',"
                        + " @LockOwner = 'Transaction', @LockTimeout = 30000;"
                        + " IF @result < 0 THROW 51000, 'sp_getapplock on a sequence owner lock failed', 1;"
                        + " FETCH NEXT FROM drawn INTO @seq; END;"
                        + " CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;",
                PortableSql.selectPassedMark(t));
    }

    @Override
    public DocumentSql documentSql(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new DocumentSql(
                "MERGE " + table + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?)) AS source (id, tenant_id, data, last_modified)"
                        + " ON target.tenant_id = source.tenant_id AND target.id = source.id"
                        + " WHEN MATCHED THEN UPDATE SET target.data = source.data,"
                        + " target.version = target.version + 1, target.last_modified = source.last_modified"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified)"
                        + " VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);",
                "DELETE FROM " + table + " WHERE tenant_id = ? AND id = ?",
                "SELECT data FROM " + table + " WHERE tenant_id = ? AND id = ?",
                // OPENJSON's value is NVARCHAR(MAX); cast to the column's own type the comparison can seek the
                // key. A CAST cuts a longer string silently, so a requested id longer than the column (2 bytes a
                // code unit) is left out instead: no document can have it, and cut it could match another one
                "SELECT data FROM " + table + " WHERE tenant_id = ? AND id IN (SELECT CAST(value AS " + ID_COLUMN
                        + ") FROM OPENJSON(?) WHERE DATALENGTH(value) <= " + 2 * IdLimits.MAX_ID_LENGTH + ")",
                "SELECT data FROM " + table + " WHERE tenant_id = ?",
                "SELECT COUNT_BIG(*) FROM " + table + " WHERE tenant_id = ?",
                "DELETE FROM " + table,
                "DELETE FROM " + table + " WHERE tenant_id = ?");
    }

    @Override
    public DaemonSql daemonSql(TableNames t) {
        // READPAST: under locking READ COMMITTED an uncommitted insert would block the read; skipping it shows it
        // as the gap it is until it commits
        String events = t.events() + " WITH (READPAST)";
        return new DaemonSql(
                PortableSql.highWaterMark(events),
                PortableSql.listGaps(events),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id FROM " + t.events()
                        + " WHERE seq_id > ? AND seq_id <= ? ORDER BY seq_id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY",
                // READPAST: a tenant whose append is in flight keeps its mark this round instead of blocking the read
                "SELECT tenant_id, last_seq FROM " + t.tenantSequences() + " WITH (READPAST)",
                // rows at or below a tenant's mark are committed and never change, so skipping locked rows loses none
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq FROM " + events
                        + " WHERE tenant_id = ? AND tenant_seq > ? AND tenant_seq <= ? ORDER BY tenant_seq"
                        + " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY",
                PortableSql.selectProgression(t),
                PortableSql.selectProgressionStamp(t),
                "MERGE " + t.progression() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?)) AS source (name, floor, last_seq_id, last_updated)"
                        + " ON target.name = source.name"
                        + " WHEN MATCHED AND target.last_seq_id = source.floor THEN UPDATE"
                        + " SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED AND source.floor = 0 THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (source.name, source.last_seq_id, source.last_updated);",
                "MERGE " + t.progression() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?)) AS source (name, last_seq_id, last_updated)"
                        + " ON target.name = source.name"
                        + " WHEN MATCHED AND target.last_seq_id < source.last_seq_id THEN UPDATE"
                        + " SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (source.name, source.last_seq_id, source.last_updated);",
                PortableSql.deleteProgression(t),
                PortableSql.insertDeadLetter(t),
                PortableSql.countLiveNodes(t),
                PortableSql.deleteDeadNodes(t),
                // READPAST: a row whose append has not registered it yet is skipped, not waited for; that append
                // then waits on the claim's applock and finds the mark raised
                PortableSql.countSequences(events),
                // APPLOCK_TEST first, so a held lock is seen without a request queued behind its owner; the
                // lock is then taken without waiting (@LockTimeout = 0), since the owner may commit in between
                "SET NOCOUNT ON; DECLARE @seq bigint = ?, @to bigint = ?, @prefix nvarchar(200) = ?,"
                        + " @resource nvarchar(255), @result int, @held int = 0;"
                        + " WHILE @seq <= @to AND @held = 0 BEGIN"
                        + " SET @resource = CONCAT(@prefix, @seq);"
                        + " IF APPLOCK_TEST('public', @resource, 'Exclusive', 'Transaction') = 0 SET @held = 1"
                        + " ELSE BEGIN"
                        + " EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive',"
                        + " @LockOwner = 'Transaction', @LockTimeout = 0;"
                        + " IF @result < 0 SET @held = 1; END;"
                        + " SET @seq = @seq + 1; END;"
                        + " SELECT @held;");
    }

    /** What every owner lock's resource name starts with; the sequence number follows. */
    static String sequenceOwnerPrefix(TableNames names) {
        return Dialect.sequenceOwnerName(names) + ":";
    }

    @Override
    public Runnable ownAppendedSequences(Connection connection, TableNames names, EventSql sql, String tenantId,
                                         String streamId, long firstVersion, long lastVersion) throws SQLException {
        long lowest;
        try (PreparedStatement ps = connection.prepareStatement(sql.ownAppendedSequences())) {
            ps.setString(1, sequenceOwnerPrefix(names));
            ps.setString(2, tenantId);
            ps.setString(3, streamId);
            ps.setLong(4, firstVersion);
            ps.setLong(5, lastVersion);
            lowest = singleLong(ps);
        }
        // a statement after the locks were granted: it sees a mark a detector committed while holding one of them
        SequenceOwnership.requireNotPassed(connection, sql, lowest);
        return () -> { };
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

    /** Deadlock victim, lock request timeout, and the Azure SQL transient connection errors. */
    private static final java.util.Set<Integer> TRANSIENT_ERRORS = java.util.Set.of(1205, 1222, -2, 4060, 40197,
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

    private static final int SHARD_LOCK_NAME_LENGTH = 255;

    @Override
    public ShardLockSession openShardLocks(javax.sql.DataSource dataSource, TableNames names) throws SQLException {
        return new SqlServerShardLocks(dataSource);
    }

    @Override
    public String propertyEquals(TableNames names) {
        return "JSON_VALUE(data, ?) = ?";
    }

    @Override
    public String propertyArgument(String property) {
        // property names are validated identifiers, so quoting them in the path is all the escaping needed
        return "$.\"" + property + "\"";
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
            appendJsonString(json, values.get(i));
        }
        return json.append(']').toString();
    }

    private static void appendJsonString(StringBuilder json, String value) {
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        json.append('"');
    }

    @Override
    public void bindUuid(PreparedStatement statement, int index, java.util.UUID id) throws SQLException {
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
