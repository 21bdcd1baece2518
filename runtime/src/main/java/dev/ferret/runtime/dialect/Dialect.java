package dev.ferret.runtime.dialect;

import dev.ferret.DatabaseEngine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * One database engine's SQL. Every statement Ferret issues comes from a dialect, rendered once at startup into the
 * {@code *Sql} records; nothing above this package builds SQL. Implementations are stateless and thread-safe.
 */
public interface Dialect {

    /**
     * The longest shard name, in characters: the width of {@code pc_event_progression.name} and
     * {@code pc_dead_letters.projection} in every engine's schema (the DDL is rendered from it). The store checks
     * every shard name that can arise against it at startup, since a longer one fails (or, cut, lands on another
     * shard's row) only when its shard first commits.
     */
    int MAX_SHARD_NAME_LENGTH = 250;

    DatabaseEngine engine();

    /** The schema used when none is configured. */
    String defaultSchema();

    SchemaSql schemaSql(TableNames names);

    /** The table of one document type, with its indexes. */
    SchemaObject documentTable(TableNames names, String documentName);

    EventSql eventSql(TableNames names);

    /** The statements that archive and compact streams and read their archived events. */
    ArchiveSql archiveSql(TableNames names);

    DocumentSql documentSql(TableNames names, String documentName);

    /**
     * The text of the JSON property at {@code path} of a document's {@code data} (null when missing or JSON null),
     * with the path written into the expression: its parts are validated identifiers, and an index on the same
     * expression can then match.
     */
    String jsonText(TableNames names, List<String> path);

    /** {@link #jsonText} read as a number. */
    String jsonNumber(TableNames names, List<String> path);

    /** {@link #jsonText} read as a timestamp with time zone. */
    String jsonTimestamp(TableNames names, List<String> path);

    /** The expression a query compares for the property at {@code path} read as {@code kind}. */
    default String jsonValue(TableNames names, List<String> path, ValueKind kind) {
        return switch (kind) {
            case NUMBER -> jsonNumber(names, path);
            case TIMESTAMP -> jsonTimestamp(names, path);
            case TEXT -> jsonText(names, path);
        };
    }

    /**
     * The statements that index a document table on {@code keys} (after the tenant id, and before the id unless
     * unique, since queries order by their keys and then the id), and what queries write to use the index.
     *
     * @param indexName the index's name, within the engine's identifier length
     * @throws dev.ferret.ConfigurationException naming the path when the engine cannot index it as its kind
     */
    DocumentIndexSql documentIndex(TableNames names, String documentName, String indexName,
                                   List<DocumentIndexSql.Key> keys, boolean unique);

    /** (schema) -&gt; the names of the indexes in the schema. */
    String existingIndexesSql();

    /** Whether a page is {@code OFFSET ? ROWS FETCH NEXT ? ROWS ONLY} (SQL Server) rather than {@code LIMIT ? OFFSET ?}. */
    default boolean pagesWithOffsetFetch() {
        return false;
    }

    DaemonSql daemonSql(TableNames names);

    default DeadLetterSql deadLetterSql(TableNames names) {
        return DeadLetterSql.of(names, pagesWithOffsetFetch());
    }

    OutboxSql outboxSql(TableNames names);

    /**
     * Makes the sequence numbers a unit of work's event inserts just drew (the rows of each of {@code ranges}, in
     * the open transaction on {@code connection}) recognisable as in flight until that transaction ends, then checks
     * that the high water mark has not already passed them. Called right after the event inserts; see
     * docs/guide/daemon.md, "Holes and their owners", for why this order cannot lose a committed event. One check
     * covers every range: the mark only ever passes a number with every number below it, so a mark past any drawn
     * number is past the lowest.
     *
     * @return what to run once the transaction has ended (nothing, where the engine ends the ownership with it)
     * @throws SequencesPassedException when the detector found a drawn number without an owner before this call
     *                                  registered it and moved the mark past it; the append must roll back
     */
    Runnable ownAppendedSequences(Connection connection, TableNames names, EventSql sql, String tenantId,
                                  List<AppendedRange> ranges) throws SQLException;

    /**
     * Binds {@code values} as one array parameter of SQL element type {@code elementType} ({@code varchar}, {@code text} or
     * {@code bigint}). Only for an engine that takes array parameters; see {@link #bindColumns}.
     */
    default void bindArray(Connection connection, PreparedStatement statement, int index, String elementType,
                           Object[] values) throws SQLException {
        throw new UnsupportedOperationException(engine() + " takes no array parameters");
    }

    /**
     * Binds equally long {@code columns} of an {@code ...OfMany} statement from parameter {@code index} on and returns
     * the index of the parameter after them: one array parameter per column ({@link #bindArray}) unless the engine
     * carries all the rows in one parameter. Only for an engine whose {@code ...OfMany} statements are not empty.
     */
    default int bindColumns(Connection connection, PreparedStatement statement, int index, List<ArrayColumn> columns)
            throws SQLException {
        for (ArrayColumn column : columns) {
            bindArray(connection, statement, index++, column.elementType(), column.values().toArray());
        }
        return index;
    }

    /**
     * Binds {@code ranges} as the columns (stream_id, first_version, last_version) of
     * {@link EventSql#selectAppendedSequencesOfMany} and {@link EventSql#ownAppendedSequencesOfMany} from parameter
     * {@code index} on, through {@link #bindColumns}, and returns the index of the parameter after them. Only for an
     * engine whose statements are not empty.
     */
    default int bindAppendedRanges(Connection connection, PreparedStatement statement, int index,
                                   List<AppendedRange> ranges) throws SQLException {
        return bindColumns(connection, statement, index, List.of(
                new ArrayColumn("stream_id", "varchar", ranges.stream().map(AppendedRange::streamId).toList()),
                new ArrayColumn("first_version", "bigint", ranges.stream().map(AppendedRange::firstVersion).toList()),
                new ArrayColumn("last_version", "bigint", ranges.stream().map(AppendedRange::lastVersion).toList())));
    }

    /**
     * Inside the detector's open transaction on {@code connection}: takes, without waiting, the owner lock of every
     * sequence from {@code from} to {@code to}. True when every one was free (no open transaction drew any of
     * them); the locks then stay held until the transaction ends, so an append that drew one of them and has not
     * registered it yet waits, and then finds the mark the detector raised in that same transaction. False when
     * any was held: its owner is still open.
     */
    boolean tryClaimSequences(Connection connection, TableNames names, DaemonSql sql, long from, long to)
            throws SQLException;

    /** The name the owner locks of one store's sequence numbers derive from. */
    static String sequenceOwnerName(TableNames names) {
        return "ferret:seq:" + names.schema().toLowerCase(Locale.ROOT) + "." + names.prefix();
    }

    /** Puts a connection's setting back; see {@link #waitForTenantSequence}. */
    @FunctionalInterface
    interface Restore {
        Restore NOTHING = () -> { };

        void restore() throws SQLException;
    }

    /**
     * Called in an append transaction just before it draws its tenant's numbers: lets the draw wait for another
     * append of the tenant to end, up to the store's {@code events().appendLockTimeout}, where the engine would
     * otherwise give up sooner. Returns what puts the connection back once the numbers are drawn. Nothing to do
     * on engines that wait without bound by default.
     */
    default Restore waitForTenantSequence(Connection connection) throws SQLException {
        return Restore.NOTHING;
    }

    /**
     * A wait bound in whole milliseconds, as the engines take one: a part of a millisecond counts as one (0 means
     * "no bound" to PostgreSQL's timeouts), and at most {@link Integer#MAX_VALUE} (the engines' limit).
     */
    static int timeoutMillis(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("a database timeout must be zero or positive, was: " + timeout);
        }
        if (timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) >= 0) {
            return Integer.MAX_VALUE;
        }
        long millis = timeout.toMillis() + (timeout.toNanosPart() % 1_000_000 == 0 ? 0 : 1);
        return (int) Math.max(1, millis);
    }

    /**
     * Runs {@link DaemonSql#advanceProgression()}: true when the row moved from {@code floor} to {@code lastSeqId},
     * false when it was elsewhere (another runner advanced it, or created it first).
     */
    default boolean advanceProgression(Connection connection, DaemonSql sql, String name, long floor, long lastSeqId,
                                       OffsetDateTime now) throws SQLException {
        return advanceProgression(connection, sql, name, floor, lastSeqId, now, "");
    }

    /**
     * {@link #advanceProgression(Connection, DaemonSql, String, long, long, OffsetDateTime)} with {@code before} (a
     * statement without parameters, or empty) run first in the same transaction: in the same round trip where the
     * engine's driver sends several statements at once, else as a statement of its own.
     */
    default boolean advanceProgression(Connection connection, DaemonSql sql, String name, long floor, long lastSeqId,
                                       OffsetDateTime now, String before) throws SQLException {
        if (!before.isEmpty()) {
            try (PreparedStatement first = connection.prepareStatement(before)) {
                first.execute();
            }
        }
        try (PreparedStatement ps = connection.prepareStatement(sql.advanceProgression())) {
            bindAdvance(ps, name, floor, lastSeqId, now);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            if (isUniqueViolation(e)) {
                return false;
            }
            throw e;
        }
    }

    /** Binds (name, floor, new last_seq_id, last_updated) of {@link DaemonSql#advanceProgression()}. */
    static void bindAdvance(PreparedStatement ps, String name, long floor, long lastSeqId,
                            OffsetDateTime now) throws SQLException {
        ps.setString(1, name);
        ps.setLong(2, floor);
        ps.setLong(3, lastSeqId);
        ps.setObject(4, now);
    }

    /** Opens the connection(s) this node's shard locks live on. */
    ShardLockSession openShardLocks(DataSource dataSource, TableNames names) throws SQLException;

    /**
     * The longest {@link #shardLockName shard lock name} this engine keeps whole, in characters: a longer one is
     * refused or, worse, cut so that two shards share one lock. {@link Integer#MAX_VALUE} where the name is hashed.
     */
    int maxShardLockNameLength();

    /** How this engine pushes "events committed" to listening nodes; empty where it cannot (they poll). */
    default Optional<CommitSignals> commitSignals(TableNames names) {
        return Optional.empty();
    }

    /**
     * Run first in a daemon page's transaction when {@code asyncPageCommits} is on: lets its commit return before the
     * engine made it durable, for that transaction only; empty where the engine offers no such commit.
     */
    default String asyncCommit() {
        return "";
    }

    /**
     * The engine's bulk load for documents known to be new ({@link DocumentSql#copyIn}); empty where inserts stay
     * statements.
     */
    default Optional<BulkCopy> bulkCopy() {
        return Optional.empty();
    }

    /**
     * How to prove a read replica of this engine has replayed up to a position of its primary; empty where the
     * engine does not report it (reads that asked for non-stale data then go to the primary).
     */
    default Optional<ReplicaSql> replicaSql() {
        return Optional.empty();
    }

    /** How large a document index key may be here; refused before the write past it. */
    default IndexKeyLimit indexKeyLimit() {
        return IndexKeyLimit.NONE;
    }

    /** The name of one shard's HotCold lock. */
    static String shardLockName(TableNames names, String shardName) {
        return "ferret:shard:" + names.schema().toLowerCase(Locale.ROOT) + "." + names.prefix() + ":" + shardName;
    }

    /**
     * Whether {@code e} is worth retrying: a lost or refused connection, a deadlock, a serialization failure or a
     * lock or statement timeout. Dialects add their engine's codes.
     */
    /** Whether {@code e} or any of its causes is an {@link SQLException} this engine reports as transient. */
    default boolean isTransientCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sqlException && isTransient(sqlException)) {
                return true;
            }
        }
        return false;
    }

    default boolean isTransient(SQLException e) {
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
            return true;
        }
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("40001"));
    }

    /**
     * Binds the documents of one {@link DocumentSql#upsertMany()} from parameter 2 on (parameter 1 is the
     * timestamp): their ids, tenant ids and JSON, in the same order. Only for an engine whose {@code upsertMany} is
     * not empty.
     */
    default void bindUpsertMany(Connection connection, PreparedStatement statement, List<String> ids,
                                List<String> tenantIds, List<String> json) throws SQLException {
        throw new UnsupportedOperationException(engine() + " upserts documents as a JDBC batch");
    }

    /** Binds a list of document ids to the single id-list parameter of {@link DocumentSql#loadMany()}. */
    void bindIds(Connection connection, PreparedStatement statement, int index, List<String> ids)
            throws SQLException;

    /** Binds an event id; engines without a JDBC UUID mapping take its text. */
    default void bindUuid(PreparedStatement statement, int index, UUID id) throws SQLException {
        statement.setObject(index, id);
    }

    /** Whether {@code e} reports a primary-key or unique-constraint violation. */
    boolean isUniqueViolation(SQLException e);

    /**
     * Takes the migration lock on {@code connection}, whose transaction is open; it is released when that
     * transaction ends (or when the returned handle closes, for engines without transaction-scoped locks).
     */
    MigrationLock lockForMigration(Connection connection, String schema, Duration timeout) throws SQLException;

    /**
     * The one statement a store runs on each database at start to report what the server offers, or empty when
     * the engine needs none. Checked by the golden files like every other statement.
     */
    default String serverReportSql(TableNames names) {
        return "";
    }

    /**
     * Runs {@link #serverReportSql} once on a database whose schema is in place: logs one INFO line of what it
     * found and throws {@link dev.ferret.ConfigurationException} naming the setting, its value and the fix for a
     * server setting Ferret cannot work with.
     */
    default void checkServer(Connection connection, TableNames names) throws SQLException {
    }

    /**
     * Words this engine reserves, upper case. Ferret splices the schema name unquoted into every statement, so a
     * schema named by one of them would break them all; the store refuses it at start instead.
     */
    default Set<String> reservedWords() {
        return Set.of();
    }

    /** How identifiers are stored in the catalog: unquoted names fold to this case. */
    default String catalogCase(String identifier) {
        return identifier.toLowerCase(Locale.ROOT);
    }

    /** Whether {@code schema} exists. */
    default boolean schemaExists(Connection connection, String schema) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT 1 FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * Lower-cased names of the tables and functions in {@code schema}, of the tables'
     * columns as {@code table.column}, and of their indexes as {@code index:name}.
     */
    default Set<String> existingObjects(Connection connection, String schema) throws SQLException {
        Set<String> names = new HashSet<>();
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT TABLE_NAME, COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add((rs.getString(1) + "." + rs.getString(2)).toLowerCase(Locale.ROOT));
                }
            }
        }
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT ROUTINE_NAME FROM INFORMATION_SCHEMA.ROUTINES WHERE ROUTINE_SCHEMA = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        try (PreparedStatement ps = connection.prepareStatement(existingIndexesSql())) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(SchemaObject.INDEX + rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        return names;
    }

    /** A held migration lock. */
    interface MigrationLock extends AutoCloseable {

        MigrationLock TRANSACTION_SCOPED = () -> { };

        @Override
        void close();
    }
}
