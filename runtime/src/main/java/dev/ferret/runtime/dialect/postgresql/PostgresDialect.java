package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.DatabaseEngine;
import dev.ferret.IdLimits;
import dev.ferret.runtime.dialect.AdvisoryLockKeys;
import dev.ferret.runtime.dialect.AppendedRange;
import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.dialect.BulkCopy;
import dev.ferret.runtime.dialect.CommitSignals;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.IndexKeyLimit;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.ReplicaSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.SequenceOwnership;
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
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** PostgreSQL: {@code jsonb}, identity columns, {@code INSERT ... ON CONFLICT}, advisory locks. */
public final class PostgresDialect implements Dialect {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresDialect.class);

    /**
     * Run on every connection of a pool Ferret opens itself: plan each statement with its parameters and the table's
     * current size. PostgreSQL otherwise settles on a generic plan after five executions and keeps it until the table
     * is next analyzed; one made while a table was empty scans it, so a statement's cost grows with the table until
     * autovacuum catches up (or forever, where autovacuum is off). Skipped below PostgreSQL 12, which lacks the
     * setting.
     */
    public static final String CUSTOM_PLANS = "SELECT set_config('plan_cache_mode', 'force_custom_plan', false)"
            + " WHERE current_setting('server_version_num')::int >= 120000";

    private static final String LOCK_NOT_AVAILABLE = "55P03";

    /** Looked up once: whether pgjdbc's copy API is visible from here decides it for the class loader's life. */
    private static final Optional<BulkCopy> COPY = PostgresCopy.ifDriverVisible();

    private static final String UNIQUE_VIOLATION = "23505";
    static final String MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(?)";

    /** Column types of ids, from the limits the public API checks, so the two cannot drift apart. */
    static final String ID_COLUMN = "varchar(" + IdLimits.MAX_ID_LENGTH + ")";
    static final String TENANT_COLUMN = "varchar(" + IdLimits.MAX_TENANT_ID_LENGTH + ")";
    static final String SHARD_NAME_COLUMN = "varchar(" + Dialect.MAX_SHARD_NAME_LENGTH + ")";

    /** PostgreSQL's reserved key words, with those that can be only a function or type name (never a schema name). */
    private static final Set<String> RESERVED_WORDS = Set.of(
            "ALL", "ANALYSE", "ANALYZE", "AND", "ANY", "ARRAY", "AS", "ASC", "ASYMMETRIC", "AUTHORIZATION", "BINARY",
            "BOTH", "CASE", "CAST", "CHECK", "COLLATE", "COLLATION", "COLUMN", "CONCURRENTLY", "CONSTRAINT",
            "CREATE", "CROSS", "CURRENT_CATALOG", "CURRENT_DATE", "CURRENT_ROLE", "CURRENT_SCHEMA", "CURRENT_TIME",
            "CURRENT_TIMESTAMP", "CURRENT_USER", "DEFAULT", "DEFERRABLE", "DESC", "DISTINCT", "DO", "ELSE", "END",
            "EXCEPT", "FALSE", "FETCH", "FOR", "FOREIGN", "FREEZE", "FROM", "FULL", "GRANT", "GROUP", "HAVING",
            "ILIKE", "IN", "INITIALLY", "INNER", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "LATERAL", "LEADING",
            "LEFT", "LIKE", "LIMIT", "LOCALTIME", "LOCALTIMESTAMP", "NATURAL", "NOT", "NOTNULL", "NULL", "OFFSET",
            "ON", "ONLY", "OR", "ORDER", "OUTER", "OVERLAPS", "PLACING", "PRIMARY", "REFERENCES", "RETURNING",
            "RIGHT", "SELECT", "SESSION_USER", "SIMILAR", "SOME", "SYMMETRIC", "SYSTEM_USER", "TABLE", "TABLESAMPLE",
            "THEN", "TO", "TRAILING", "TRUE", "UNION", "UNIQUE", "USER", "USING", "VARIADIC", "VERBOSE", "WHEN",
            "WHERE", "WINDOW", "WITH");

    @Override
    public Set<String> reservedWords() {
        return RESERVED_WORDS;
    }

    @Override
    public DatabaseEngine engine() {
        return DatabaseEngine.POSTGRESQL;
    }

    @Override
    public String serverReportSql(TableNames names) {
        return "SELECT current_setting('server_version') AS version, current_setting('autovacuum') AS autovacuum,"
                + " current_setting('plan_cache_mode', true) AS plan_cache_mode";
    }

    @Override
    public void checkServer(Connection connection, TableNames names) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(serverReportSql(names));
             ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return;
            }
            String autovacuum = rs.getString("autovacuum");
            String planCacheMode = rs.getString("plan_cache_mode");
            LOG.info("PostgreSQL {}: autovacuum {}, plan_cache_mode {}", rs.getString("version"), autovacuum,
                    planCacheMode == null ? "(not available)" : planCacheMode);
            if ("off".equals(autovacuum) && !"force_custom_plan".equals(planCacheMode)) {
                LOG.warn("autovacuum is off and this data source's connections use plan_cache_mode={}: PostgreSQL"
                        + " keeps the plans it made while Ferret's tables were small, so appends, event loads and"
                        + " the high water mark slow down as the tables grow. Turn autovacuum on, run ANALYZE after"
                        + " bulk loads, or add options=-c plan_cache_mode=force_custom_plan to the JDBC URL",
                        planCacheMode);
            }
        }
    }

    @Override
    public String defaultSchema() {
        return "public";
    }

    @Override
    public SchemaSql schemaSql(TableNames t) {
        return PostgresSchema.of(t);
    }

    /**
     * Room left in each heap page of a document table: a projection rewrites its documents page after page, and an
     * update that fits in its row's page is a heap-only tuple, with no new entry in the primary key. Measured with the
     * catch-up harness on PostgreSQL 15 (docs/guide/benchmarks.md): rebuilds 10-17% faster at 80 and 70 than at the
     * default 100, at the cost of tables a fifth larger.
     */
    static final int DOCUMENT_FILL_FACTOR = 80;

    @Override
    public SchemaObject documentTable(TableNames t, String documentName) {
        return new SchemaObject(t.documentTableName(documentName), List.of(
                "CREATE TABLE IF NOT EXISTS " + t.document(documentName) + " (\n"
                        + "  id " + ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + TENANT_COLUMN + " NOT NULL,\n"
                        + "  data jsonb NOT NULL,\n"
                        + "  version bigint NOT NULL,\n"
                        + "  last_modified timestamptz NOT NULL,\n"
                        + "  PRIMARY KEY (tenant_id, id)\n"
                        + ") WITH (fillfactor = " + DOCUMENT_FILL_FACTOR + ")"));
    }

    @Override
    public ArchiveSql archiveSql(TableNames t) {
        return ArchiveSql.portable(t, "?::jsonb");
    }

    @Override
    public EventSql eventSql(TableNames t) {
        return PostgresEvents.statements(t);
    }

    /**
     * A lost commit is lost whole, and WAL order keeps what follows it consistent: a later commit that reached the
     * disk, of any session, carries every earlier one with it.
     */
    @Override
    public String asyncCommit() {
        return "SET LOCAL synchronous_commit TO OFF";
    }

    @Override
    public Optional<BulkCopy> bulkCopy() {
        return COPY;
    }

    @Override
    public DocumentSql documentSql(TableNames t, String documentName) {
        return PostgresDocuments.statements(t, documentName);
    }

    @Override
    public DaemonSql daemonSql(TableNames t) {
        return new DaemonSql(
                PortableSql.highWaterMark(t.events()),
                PortableSql.listGaps(t.events()),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers FROM " + t.events()
                        + " WHERE seq_id > ? AND seq_id <= ? ORDER BY seq_id LIMIT ?",
                PortableSql.tenantMarks(t),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers, tenant_seq FROM " + t.events()
                        + " WHERE tenant_id = ? AND tenant_seq > ? AND tenant_seq <= ? ORDER BY tenant_seq LIMIT ?",
                PortableSql.selectProgression(t),
                PortableSql.selectProgressionStamp(t),
                // one statement: move the row from the floor, or create it from zero; the count says which held
                "WITH s (name, floor, last_seq_id, last_updated) AS ("
                        + "VALUES (CAST(? AS varchar), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS timestamptz))),"
                        + " moved AS (UPDATE " + t.progression() + " AS p"
                        + " SET last_seq_id = s.last_seq_id, last_updated = s.last_updated FROM s"
                        + " WHERE p.name = s.name AND p.last_seq_id = s.floor RETURNING 1),"
                        + " created AS (INSERT INTO " + t.progression() + " (name, last_seq_id, last_updated)"
                        + " SELECT name, last_seq_id, last_updated FROM s"
                        + " WHERE s.floor = 0 AND NOT EXISTS (SELECT 1 FROM moved)"
                        + " ON CONFLICT (name) DO NOTHING RETURNING 1)"
                        + " SELECT (SELECT count(*) FROM moved) + (SELECT count(*) FROM created)",
                "INSERT INTO " + t.progression() + " AS p (name, last_seq_id, last_updated) VALUES (?, ?, ?)"
                        + " ON CONFLICT (name) DO UPDATE SET last_seq_id = EXCLUDED.last_seq_id,"
                        + " last_updated = EXCLUDED.last_updated WHERE p.last_seq_id < EXCLUDED.last_seq_id",
                PortableSql.deleteProgression(t),
                PortableSql.insertDeadLetter(t),
                PortableSql.countLiveNodes(t),
                PortableSql.listNodes(t),
                PortableSql.deleteDeadNodes(t),
                PortableSql.countSequences(t.events()),
                // every number is tried (no short cut), so a failed claim holds some locks until its rollback
                "SELECT COUNT(*) FROM generate_series(CAST(? AS bigint), CAST(? AS bigint)) AS hole(seq_id)"
                        + " WHERE NOT pg_try_advisory_xact_lock(CAST(? AS integer), CAST(seq_id % 2147483648 AS integer))",
                PortableSql.selectEveryProgression(t));
    }

    @Override
    public OutboxSql outboxSql(TableNames t) {
        return OutboxSql.of(t, "?::jsonb", "payload", OutboxSql.deleteDeliveredBatch(t));
    }

    @Override
    public boolean advanceProgression(Connection connection, DaemonSql sql, String name, long floor, long lastSeqId,
                                      OffsetDateTime now, String before) throws SQLException {
        // pgjdbc sends both statements before it waits: a page's SET LOCAL costs no round trip of its own
        String statements = before.isEmpty() ? sql.advanceProgression() : before + ";\n" + sql.advanceProgression();
        try (PreparedStatement ps = connection.prepareStatement(statements)) {
            Dialect.bindAdvance(ps, name, floor, lastSeqId, now);
            boolean rows = ps.execute();
            while (!rows && ps.getUpdateCount() != -1) {
                rows = ps.getMoreResults();
            }
            if (!rows) {
                throw new SQLException("the progression advance returned no row");
            }
            try (ResultSet rs = ps.getResultSet()) {
                return rs.next() && rs.getLong(1) == 1;
            }
        }
    }

    /** The first argument of the two-int owner locks of one store's sequence numbers. */
    static int sequenceOwnerKey(TableNames names) {
        return (int) (AdvisoryLockKeys.keyOf(Dialect.sequenceOwnerName(names)) >>> Integer.SIZE);
    }

    @Override
    public Runnable ownAppendedSequences(Connection connection, TableNames names, EventSql sql, String tenantId,
                                         List<AppendedRange> ranges) throws SQLException {
        // two statements, one round trip: pgjdbc sends both before it waits, and the server runs the mark's read
        // as a statement of its own after the locks were granted, so in READ COMMITTED its snapshot sees a mark a
        // detector committed while holding one of them
        try (PreparedStatement ps = connection.prepareStatement(sql.ownAppendedSequencesOfMany() + ";\n"
                + sql.selectPassedMark())) {
            ps.setInt(1, sequenceOwnerKey(names));
            ps.setString(bindAppendedRanges(connection, ps, 2, ranges), tenantId);
            ps.execute();
            long lowest;
            try (ResultSet rs = ps.getResultSet()) {
                rs.next();
                lowest = rs.getLong(1);
            }
            if (!ps.getMoreResults()) {
                throw new SQLException("the high water mark's read after the owner locks returned no result");
            }
            try (ResultSet mark = ps.getResultSet()) {
                SequenceOwnership.requireNotPassed(lowest, mark);
            }
        }
        return () -> { };
    }

    @Override
    public boolean tryClaimSequences(Connection connection, TableNames names, DaemonSql sql, long from, long to)
            throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql.claimSequences())) {
            ps.setLong(1, from);
            ps.setLong(2, to);
            ps.setInt(3, sequenceOwnerKey(names));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 0;
            }
        }
    }

    @Override
    public boolean isTransient(SQLException e) {
        String state = e.getSQLState();
        // deadlock, admin shutdown (pg_terminate_backend), crash shutdown, cannot connect now, lock timeout
        return Dialect.super.isTransient(e) || "40P01".equals(state) || "57P01".equals(state)
                || "57P02".equals(state) || "57P03".equals(state) || LOCK_NOT_AVAILABLE.equals(state);
    }

    /** The lock key is a hash of the whole name (see {@link AdvisoryLockKeys}), so no length is cut. */
    @Override
    public int maxShardLockNameLength() {
        return Integer.MAX_VALUE;
    }

    /**
     * A btree entry holds at most 2,704 bytes ("index row size exceeds btree version 4 maximum 2704"), its header,
     * length words and alignment included: 2,640 bytes of UTF-8 key data leave room for those. PostgreSQL may
     * compress a long value to fit; Ferret counts it uncompressed, so whether a value is taken never depends on how
     * well it compresses.
     */
    private static final IndexKeyLimit INDEX_KEY_LIMIT = new IndexKeyLimit("PostgreSQL", 2_640, false, 20, 8, null);

    @Override
    public IndexKeyLimit indexKeyLimit() {
        return INDEX_KEY_LIMIT;
    }

    @Override
    public Optional<ReplicaSql> replicaSql() {
        // byte offsets from the log's origin: numbers the runtime compares and keeps without asking the server again.
        // The insert position, not the write position: a page committed without waiting for the flush
        // (asyncPageCommits) may have its commit record still in the WAL buffers, past the write position
        return Optional.of(new ReplicaSql("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint",
                "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint"));
    }

    @Override
    public Optional<CommitSignals> commitSignals(TableNames names) {
        return Optional.of(new PostgresCommitSignals(names));
    }

    @Override
    public ShardLockSession openShardLocks(DataSource dataSource, TableNames names) throws SQLException {
        return new PostgresShardLocks(dataSource);
    }

    @Override
    public DocumentIndexSql documentIndex(TableNames names, String documentName, String indexName,
                                          List<DocumentIndexSql.Key> keys, boolean unique) {
        List<String> expressions = new ArrayList<>();
        for (DocumentIndexSql.Key key : keys) {
            expressions.add(jsonValue(names, key.path(), key.kind()));
        }
        List<String> parts = new ArrayList<>();
        parts.add("tenant_id");
        expressions.forEach(e -> parts.add("(" + e + ")"));
        if (!unique) {
            // queries order by their keys, then id: with id last the index yields that order, and a page stops early
            parts.add("id");
        }
        return new DocumentIndexSql(List.of("CREATE " + (unique ? "UNIQUE " : "") + "INDEX IF NOT EXISTS " + indexName
                + " ON " + names.document(documentName) + " (" + String.join(", ", parts) + ")"), expressions);
    }

    @Override
    public String existingIndexesSql() {
        return "SELECT indexname FROM pg_indexes WHERE schemaname = ?";
    }

    @Override
    public String jsonText(TableNames names, List<String> path) {
        return "(data #>> '{" + String.join(",", path) + "}')";
    }

    @Override
    public String jsonNumber(TableNames names, List<String> path) {
        return "(data #>> '{" + String.join(",", path) + "}')::numeric";
    }

    @Override
    public String jsonTimestamp(TableNames names, List<String> path) {
        return jsonInstantFunction(names) + "(data #>> '{" + String.join(",", path) + "}')";
    }

    static String jsonInstantFunction(TableNames t) {
        return t.schema() + "." + t.local("json_instant");
    }

    @Override
    public void bindUpsertMany(Connection connection, PreparedStatement statement, List<String> ids,
                               List<String> tenantIds, List<String> json) throws SQLException {
        statement.setArray(2, connection.createArrayOf("varchar", ids.toArray()));
        statement.setArray(3, connection.createArrayOf("varchar", tenantIds.toArray()));
        statement.setArray(4, connection.createArrayOf("text", json.toArray()));
    }

    @Override
    public void bindArray(Connection connection, PreparedStatement statement, int index, String elementType,
                          Object[] values) throws SQLException {
        statement.setArray(index, connection.createArrayOf(elementType, values));
    }

    @Override
    public void bindIds(Connection connection, PreparedStatement statement, int index, List<String> ids)
            throws SQLException {
        statement.setArray(index, connection.createArrayOf("varchar", ids.toArray()));
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return UNIQUE_VIOLATION.equals(e.getSQLState());
    }

    @Override
    public MigrationLock lockForMigration(Connection connection, String schema, Duration timeout)
            throws SQLException {
        try (Statement s = connection.createStatement()) {
            // bounds the wait behind another node's migration; SET LOCAL ends with the transaction
            s.execute("SET LOCAL lock_timeout = " + Dialect.timeoutMillis(timeout));
        }
        try (PreparedStatement ps = connection.prepareStatement(MIGRATION_LOCK)) {
            ps.setLong(1, AdvisoryLockKeys.keyOf(AdvisoryLockKeys.migrationLockName(schema)));
            ps.execute();
        }
        return MigrationLock.TRANSACTION_SCOPED;
    }
}
