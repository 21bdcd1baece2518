package dev.ferret.runtime.dialect.h2;

import dev.ferret.DatabaseEngine;
import dev.ferret.IdLimits;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.ShardLockSession;
import dev.ferret.runtime.dialect.TableNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;

/**
 * H2 in its own SQL (not a compatibility mode): {@code JSON} columns written with {@code FORMAT JSON}, identity
 * columns, {@code MERGE ... USING} read back through {@code FINAL TABLE}, and a Java function for JSON properties,
 * which H2 has no built-in for.
 */
public final class H2Dialect implements Dialect {

    /** Connection broken, lock timeout, deadlock, database closed. */
    private static final Set<Integer> TRANSIENT_ERRORS = Set.of(90067, 50200, 40001, 90098, 90121);

    private static final int CONCURRENT_UPDATE = 90131;

    private static final int DUPLICATE_KEY = 23505;

    /** Column types of ids, from the limits the public API checks, so the two cannot drift apart. */
    static final String ID_COLUMN = "VARCHAR(" + IdLimits.MAX_ID_LENGTH + ")";
    static final String TENANT_COLUMN = "VARCHAR(" + IdLimits.MAX_TENANT_ID_LENGTH + ")";
    static final String SHARD_NAME_COLUMN = "VARCHAR(" + Dialect.MAX_SHARD_NAME_LENGTH + ")";
    /** The width of {@code pc_shard_locks.name}, which holds a whole lock name. */
    static final int SHARD_LOCK_NAME_LENGTH = 500;

    /*
     * What a MERGE source casts a bound string to. H2 cuts a string CAST to a shorter VARCHAR(n) silently, so a cast
     * to the column's width would let two ids differing past it land on one row; cast unbounded, the column's own
     * width refuses a longer one (22001), as PostgreSQL and SQL Server do.
     */
    static final String TEXT = "VARCHAR";

    /**
     * H2 commits DDL implicitly, so a transaction-scoped database lock cannot span a migration. An embedded H2 lives
     * in this JVM, so a JVM lock per database and schema serializes stores migrating at once; across JVMs (H2 server
     * mode) the idempotent {@code IF NOT EXISTS} DDL keeps concurrent migrations safe.
     */
    private static final ConcurrentMap<String, ReentrantLock> MIGRATION_LOCKS = new ConcurrentHashMap<>();

    /** How long an append waits for the tenant's sequence row, in H2's LOCK_TIMEOUT milliseconds. */
    private final int appendLockTimeoutMillis;

    /** With the default {@code events().appendLockTimeout}. */
    public H2Dialect() {
        this(StoreOptions.DEFAULT_APPEND_LOCK_TIMEOUT);
    }

    public H2Dialect(Duration appendLockTimeout) {
        this.appendLockTimeoutMillis = Dialect.timeoutMillis(appendLockTimeout);
    }

    /** H2's keywords ("Keywords / Reserved Words" in its grammar documentation). */
    private static final Set<String> RESERVED_WORDS = Set.of(
            "ALL", "AND", "ANY", "ARRAY", "AS", "ASYMMETRIC", "AUTHORIZATION", "BETWEEN", "BOTH", "CASE", "CAST",
            "CHECK", "CONSTRAINT", "CROSS", "CURRENT_CATALOG", "CURRENT_DATE", "CURRENT_PATH", "CURRENT_ROLE",
            "CURRENT_SCHEMA", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "DAY", "DEFAULT", "DISTINCT",
            "ELSE", "END", "EXCEPT", "EXISTS", "FALSE", "FETCH", "FOR", "FOREIGN", "FROM", "FULL", "GROUP", "GROUPS",
            "HAVING", "HOUR", "IF", "ILIKE", "IN", "INNER", "INTERSECT", "INTERVAL", "IS", "JOIN", "KEY", "LEADING",
            "LEFT", "LIKE", "LIMIT", "LOCALTIME", "LOCALTIMESTAMP", "MINUS", "MINUTE", "MONTH", "NATURAL", "NOT",
            "NULL", "OFFSET", "ON", "OR", "ORDER", "OVER", "PARTITION", "PRIMARY", "QUALIFY", "RANGE", "REGEXP",
            "RIGHT", "ROW", "ROWNUM", "ROWS", "SECOND", "SELECT", "SESSION_USER", "SET", "SOME", "SYMMETRIC",
            "SYSTEM_USER", "TABLE", "TO", "TOP", "TRAILING", "TRUE", "UESCAPE", "UNION", "UNIQUE", "UNKNOWN", "USER",
            "USING", "VALUE", "VALUES", "WHEN", "WHERE", "WINDOW", "WITH", "YEAR", "_ROWID_");

    @Override
    public Set<String> reservedWords() {
        return RESERVED_WORDS;
    }

    @Override
    public DatabaseEngine engine() {
        return DatabaseEngine.H2;
    }

    /**
     * H2 bounds every lock wait by the session's LOCK_TIMEOUT (2 s by default), so a second append of a busy
     * tenant would fail on the sequence row where PostgreSQL waits. The draw runs with the append bound; the
     * session's own value comes back after it. {@code SET LOCK_TIMEOUT} neither commits nor is undone by a
     * rollback, so it does not touch the append's transaction.
     */
    @Override
    public Restore waitForTenantSequence(Connection connection) throws SQLException {
        int previous;
        try (Statement s = connection.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT LOCK_TIMEOUT()")) {
                rs.next();
                previous = rs.getInt(1);
            }
            if (previous == appendLockTimeoutMillis) {
                return Restore.NOTHING;
            }
            s.execute("SET LOCK_TIMEOUT " + appendLockTimeoutMillis);
        }
        return () -> {
            try (Statement s = connection.createStatement()) {
                s.execute("SET LOCK_TIMEOUT " + previous);
            }
        };
    }

    @Override
    public String defaultSchema() {
        return "PUBLIC";
    }

    @Override
    public String catalogCase(String identifier) {
        return identifier.toUpperCase(Locale.ROOT);
    }

    /** The function the property filter calls; lives in the store's schema. */
    static String jsonTextFunction(TableNames t) {
        return t.schema() + "." + t.local("json_text");
    }

    @Override
    public SchemaSql schemaSql(TableNames t) {
        return H2Schema.of(t);
    }

    @Override
    public OutboxSql outboxSql(TableNames t) {
        return OutboxSql.of(t, "? FORMAT JSON", "CAST(payload AS VARCHAR)", OutboxSql.deleteDeliveredBatch(t));
    }

    @Override
    public SchemaObject documentTable(TableNames t, String documentName) {
        return new SchemaObject(t.documentTableName(documentName), List.of(
                "CREATE TABLE IF NOT EXISTS " + t.document(documentName) + " (\n"
                        + "  id " + ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  data JSON NOT NULL,\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  last_modified TIMESTAMP WITH TIME ZONE NOT NULL,\n"
                        + "  PRIMARY KEY (tenant_id, id)\n"
                        + ")"));
    }

    @Override
    public ArchiveSql archiveSql(TableNames t) {
        return ArchiveSql.portable(t, "? FORMAT JSON");
    }

    @Override
    public EventSql eventSql(TableNames t) {
        return H2Events.statements(t);
    }

    @Override
    public DocumentSql documentSql(TableNames t, String documentName) {
        String table = t.document(documentName);
        return new DocumentSql(
                "MERGE INTO " + table + " AS d"
                        + " USING (VALUES (CAST(? AS " + TEXT + "), CAST(? AS " + TEXT + "), CAST(? AS VARCHAR) FORMAT JSON,"
                        + " CAST(? AS TIMESTAMP WITH TIME ZONE))) AS src (id, tenant_id, data, last_modified)"
                        + " ON d.tenant_id = src.tenant_id AND d.id = src.id"
                        + " WHEN MATCHED THEN UPDATE SET data = src.data, version = d.version + 1,"
                        + " last_modified = src.last_modified"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified)"
                        + " VALUES (src.id, src.tenant_id, src.data, 1, src.last_modified)",
                "DELETE FROM " + table + " WHERE tenant_id = ? AND id = ?",
                "SELECT CAST(data AS VARCHAR) FROM " + table + " WHERE tenant_id = ? AND id = ?",
                // a join on the unnested ids, so every id is one primary-key seek: with "id = ANY (?)" H2 seeks
                // the tenant only and filters all its rows. Numbered parameters keep the (tenant, ids) binding.
                "SELECT CAST(d.data AS VARCHAR) FROM UNNEST(CAST(?2 AS " + TEXT + " ARRAY)) AS k(id)"
                        + " INNER JOIN " + table + " d ON d.tenant_id = ?1 AND d.id = k.id",
                "SELECT CAST(data AS VARCHAR) FROM " + table + " WHERE tenant_id = ?",
                "SELECT COUNT(*) FROM " + table + " WHERE tenant_id = ?",
                "DELETE FROM " + table,
                "DELETE FROM " + table + " WHERE tenant_id = ?",
                // one statement for a page's documents of this type instead of one MERGE execution per document
                "MERGE INTO " + table + " AS d"
                        + " USING (SELECT u.id, u.tenant_id, u.data FORMAT JSON AS data,"
                        + " CAST(?1 AS TIMESTAMP WITH TIME ZONE) AS last_modified"
                        + " FROM UNNEST(CAST(?2 AS " + TEXT + " ARRAY), CAST(?3 AS " + TEXT + " ARRAY),"
                        + " CAST(?4 AS VARCHAR ARRAY)) AS u(id, tenant_id, data)) AS src"
                        + " ON d.tenant_id = src.tenant_id AND d.id = src.id"
                        + " WHEN MATCHED THEN UPDATE SET data = src.data, version = d.version + 1,"
                        + " last_modified = src.last_modified"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified)"
                        + " VALUES (src.id, src.tenant_id, src.data, 1, src.last_modified)",
                "INSERT INTO " + table + " (id, tenant_id, data, version, last_modified)"
                        + " VALUES (CAST(? AS " + TEXT + "), CAST(? AS " + TEXT + "), CAST(? AS VARCHAR) FORMAT JSON, 1,"
                        + " CAST(? AS TIMESTAMP WITH TIME ZONE))",
                "INSERT INTO " + table + " (id, tenant_id, data, version, last_modified)"
                        + " SELECT u.id, u.tenant_id, u.data FORMAT JSON, 1, CAST(?1 AS TIMESTAMP WITH TIME ZONE)"
                        + " FROM UNNEST(CAST(?2 AS " + TEXT + " ARRAY), CAST(?3 AS " + TEXT + " ARRAY),"
                        + " CAST(?4 AS VARCHAR ARRAY)) AS u(id, tenant_id, data)",
                "");
    }

    @Override
    public DaemonSql daemonSql(TableNames t) {
        return new DaemonSql(
                PortableSql.highWaterMark(t.events()),
                PortableSql.listGaps(t.events()),
                "SELECT seq_id, id, stream_id, version, type, CAST(data AS VARCHAR), timestamp, tenant_id, correlation_id, causation_id, "
                        + "CAST(headers AS VARCHAR) FROM "
                        + t.events() + " WHERE seq_id > ? AND seq_id <= ? ORDER BY seq_id LIMIT ?",
                PortableSql.tenantMarks(t),
                "SELECT seq_id, id, stream_id, version, type, CAST(data AS VARCHAR), timestamp, tenant_id, correlation_id, causation_id, "
                        + "CAST(headers AS VARCHAR), tenant_seq"
                        + " FROM " + t.events()
                        + " WHERE tenant_id = ? AND tenant_seq > ? AND tenant_seq <= ? ORDER BY tenant_seq LIMIT ?",
                PortableSql.selectProgression(t),
                PortableSql.selectProgressionStamp(t),
                "MERGE INTO " + t.progression() + " AS p"
                        + " USING (VALUES (CAST(? AS " + TEXT + "), CAST(? AS BIGINT), CAST(? AS BIGINT),"
                        + " CAST(? AS TIMESTAMP WITH TIME ZONE))) AS s (name, floor, last_seq_id, last_updated)"
                        + " ON p.name = s.name"
                        + " WHEN MATCHED AND p.last_seq_id = s.floor THEN UPDATE"
                        + " SET last_seq_id = s.last_seq_id, last_updated = s.last_updated"
                        + " WHEN NOT MATCHED AND s.floor = 0 THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (s.name, s.last_seq_id, s.last_updated)",
                "MERGE INTO " + t.progression() + " AS p"
                        + " USING (VALUES (CAST(? AS " + TEXT + "), CAST(? AS BIGINT),"
                        + " CAST(? AS TIMESTAMP WITH TIME ZONE))) AS s (name, last_seq_id, last_updated)"
                        + " ON p.name = s.name"
                        + " WHEN MATCHED AND p.last_seq_id < s.last_seq_id THEN UPDATE"
                        + " SET last_seq_id = s.last_seq_id, last_updated = s.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (s.name, s.last_seq_id, s.last_updated)",
                PortableSql.deleteProgression(t),
                PortableSql.insertDeadLetter(t),
                PortableSql.countLiveNodes(t),
                PortableSql.listNodes(t),
                PortableSql.deleteDeadNodes(t),
                PortableSql.countSequences(t.events()),
                "",
                PortableSql.selectEveryProgression(t));
    }

    private static H2SequenceOwners owners(Connection connection, TableNames names) throws SQLException {
        return H2SequenceOwners.of(connection.getMetaData().getURL() + "|" + Dialect.sequenceOwnerName(names));
    }

    @Override
    public Runnable ownAppendedSequences(Connection connection, TableNames names, EventSql sql, String tenantId,
                                         List<AppendedRange> ranges) throws SQLException {
        List<Long> drawn = new ArrayList<>();
        try (PreparedStatement ps = connection.prepareStatement(sql.selectAppendedSequencesOfMany())) {
            ps.setString(bindAppendedRanges(connection, ps, 1, ranges), tenantId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    drawn.add(rs.getLong(3));
                }
            }
        }
        return owners(connection, names).own(drawn.stream().mapToLong(Long::longValue).toArray());
    }

    @Override
    public boolean tryClaimSequences(Connection connection, TableNames names, DaemonSql sql, long from, long to)
            throws SQLException {
        return owners(connection, names).tryPass(from, to);
    }

    @Override
    public boolean isTransient(SQLException e) {
        return Dialect.super.isTransient(e) || TRANSIENT_ERRORS.contains(e.getErrorCode());
    }

    @Override
    public boolean advanceProgression(Connection connection, DaemonSql sql, String name, long floor, long lastSeqId,
                                      OffsetDateTime now, String before) throws SQLException {
        try {
            return Dialect.super.advanceProgression(connection, sql, name, floor, lastSeqId, now, before);
        } catch (SQLException e) {
            if (e.getErrorCode() == CONCURRENT_UPDATE) {
                return false;
            }
            throw e;
        }
    }

    /** A lock is a row of {@code pc_shard_locks}: its name column refuses a longer name. */
    @Override
    public int maxShardLockNameLength() {
        return SHARD_LOCK_NAME_LENGTH;
    }

    @Override
    public ShardLockSession openShardLocks(DataSource dataSource, TableNames names) {
        return new H2ShardLocks(dataSource, names);
    }

    @Override
    public DocumentIndexSql documentIndex(TableNames t, String documentName, String indexName,
                                          List<DocumentIndexSql.Key> keys, boolean unique) {
        // H2 matches no expression to an index: it indexes generated columns, and queries name the columns
        List<String> ddl = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        for (DocumentIndexSql.Key key : keys) {
            String type = switch (key.kind()) {
                case NUMBER -> "DECFLOAT";
                case TIMESTAMP -> "TIMESTAMP WITH TIME ZONE";
                case TEXT -> "VARCHAR";
            };
            ddl.add("ALTER TABLE " + t.document(documentName) + " ADD COLUMN IF NOT EXISTS " + key.column() + " "
                    + type + " GENERATED ALWAYS AS (" + jsonValue(t, key.path(), key.kind()) + ")");
            columns.add(key.column());
        }
        ddl.add("CREATE " + (unique ? "UNIQUE " : "") + "INDEX IF NOT EXISTS " + t.schema() + "." + indexName + " ON "
                + t.document(documentName) + " (tenant_id, " + String.join(", ", columns) + (unique ? "" : ", id")
                + ")");
        return new DocumentIndexSql(ddl, columns);
    }

    @Override
    public String existingIndexesSql() {
        return "SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES WHERE INDEX_SCHEMA = ?";
    }

    @Override
    public String jsonText(TableNames t, List<String> path) {
        return jsonTextFunction(t) + "(CAST(data AS VARCHAR), '" + String.join(".", path) + "')";
    }

    @Override
    public String jsonNumber(TableNames t, List<String> path) {
        return "CAST(" + jsonText(t, path) + " AS DECFLOAT)";
    }

    @Override
    public String jsonTimestamp(TableNames t, List<String> path) {
        return "CAST(" + jsonText(t, path) + " AS TIMESTAMP WITH TIME ZONE)";
    }

    @Override
    public void bindUpsertMany(Connection connection, PreparedStatement statement, List<String> ids,
                               List<String> tenantIds, List<String> json) throws SQLException {
        statement.setObject(2, ids.toArray(new String[0]));
        statement.setObject(3, tenantIds.toArray(new String[0]));
        statement.setObject(4, json.toArray(new String[0]));
    }

    @Override
    public void bindArray(Connection connection, PreparedStatement statement, int index, String elementType,
                          Object[] values) throws SQLException {
        statement.setObject(index, values);
    }

    @Override
    public void bindIds(Connection connection, PreparedStatement statement, int index, List<String> ids)
            throws SQLException {
        statement.setObject(index, ids.toArray(new String[0]));
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return e.getErrorCode() == DUPLICATE_KEY;
    }

    @Override
    public MigrationLock lockForMigration(Connection connection, String schema, Duration timeout)
            throws SQLException {
        String key = connection.getMetaData().getURL() + "|" + catalogCase(schema);
        ReentrantLock lock = MIGRATION_LOCKS.computeIfAbsent(key, k -> new ReentrantLock());
        try {
            if (!lock.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new SQLException("timed out after " + timeout + " waiting for the migration lock of " + key);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted waiting for the migration lock of " + key, e);
        }
        return lock::unlock;
    }
}
