package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.TableNames;

/**
 * SQL Server's statements of the event store: stream heads as MERGE, event inserts, reads of a stream, and the owner
 * locks of appended sequence numbers as application locks. mssql-jdbc takes no array parameter, so the statements
 * for a whole unit of work ({@code ...OfMany}) read their rows from one JSON parameter through {@code OPENJSON}
 * ({@link JsonRows}; compatibility level 130, which the store requires at start); a table-valued parameter would
 * need a table type created in the schema. Golden-tested with the rest of the dialect.
 */
final class SqlServerEvents {

    /**
     * The rows of {@link dev.ferret.runtime.dialect.Dialect#bindAppendedRanges} joined to the event rows they name.
     * The range's stream id is read as the key column's own type and compared in its collation (explicit, so it
     * wins over the database's that an OPENJSON column carries), so the join seeks the unique key; stream ids were
     * checked against that width when the append was buffered, so none is cut.
     */
    private static String appendedEvents(TableNames t) {
        return "OPENJSON(?) WITH (stream_id " + SqlServerDialect.ID_TYPE + ", first_version BIGINT,"
                + " last_version BIGINT) AS a JOIN " + t.events() + " e ON e.stream_id = a.stream_id"
                + SqlServerDialect.KEY + " AND e.version >= a.first_version AND e.version <= a.last_version";
    }

    /**
     * One transaction-owned applock per number {@code drawn} selects, then the lowest number: sp_getapplock takes
     * its resource only as a constant or a variable, hence the name built into @resource first, and a procedure
     * cannot be called from a query, hence the cursor.
     */
    private static String ownDrawn(String drawn) {
        return "SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = ?, @seq bigint, @lowest bigint,"
                + " @resource nvarchar(255), @result int;"
                + " DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR " + drawn + ";"
                + " OPEN drawn; FETCH NEXT FROM drawn INTO @seq;"
                + " WHILE @@FETCH_STATUS = 0 BEGIN"
                + " IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq;"
                + " SET @resource = CONCAT(@prefix, @seq);"
                + " EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive',"
                + " @LockOwner = 'Transaction', @LockTimeout = 30000;"
                + " IF @result < 0 THROW 51000, 'sp_getapplock on a sequence owner lock failed', 1;"
                + " FETCH NEXT FROM drawn INTO @seq; END;"
                + " CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;";
    }

    private SqlServerEvents() {
    }

    static EventSql statements(TableNames t) {
        return new EventSql(
                "INSERT INTO " + t.streams() + " (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (?, ?, ?, ?, ?, ?)",
                "MERGE " + t.streams() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?, ?, ?)) AS source (id, tenant_id, type, version, timestamp, created)"
                        + " ON target.tenant_id = source.tenant_id" + SqlServerDialect.KEY + " AND target.id = source.id" + SqlServerDialect.KEY
                        + " WHEN MATCHED THEN UPDATE"
                        + " SET target.version = target.version + source.version, target.timestamp = source.timestamp"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (source.id, source.tenant_id, source.type, source.version, source.timestamp,"
                        + " source.created)"
                        + " OUTPUT inserted.version;",
                // the rows' stream ids are distinct (StreamHeads sends a stream appended twice one statement per
                // append): MERGE refuses to update one target row twice. A type or id longer than its column fails
                // the insert, as the single-row MERGE's would; NVARCHAR(MAX) here so that OPENJSON cuts nothing
                "MERGE " + t.streams() + " WITH (HOLDLOCK) AS target"
                        + " USING (SELECT ? AS tenant_id, ? AS timestamp, ? AS created, s.id, s.type, s.n"
                        + " FROM OPENJSON(?) WITH (id " + SqlServerDialect.ID_TYPE + ", type NVARCHAR(MAX), n BIGINT)"
                        + " AS s) AS source"
                        + " ON target.tenant_id = source.tenant_id" + SqlServerDialect.KEY + " AND target.id = source.id" + SqlServerDialect.KEY
                        + " WHEN MATCHED THEN UPDATE"
                        + " SET target.version = target.version + source.n, target.timestamp = source.timestamp"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (source.id, source.tenant_id, source.type, source.n, source.timestamp,"
                        + " source.created)"
                        + " OUTPUT inserted.id, inserted.version;",
                "UPDATE " + t.streams() + " SET version = ?, timestamp = ?"
                        + " WHERE tenant_id = ? AND id = ? AND version = ?",
                "SELECT version, type, timestamp, archived FROM " + t.streams() + " WHERE tenant_id = ? AND id = ?",
                "MERGE " + t.tenantSequences() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?)) AS source (tenant_id, drawn, last_updated)"
                        + " ON target.tenant_id = source.tenant_id" + SqlServerDialect.KEY
                        + " WHEN MATCHED THEN UPDATE SET target.last_seq = target.last_seq + source.drawn,"
                        + " target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (tenant_id, last_seq, last_updated)"
                        + " VALUES (source.tenant_id, source.drawn, source.last_updated)"
                        + " OUTPUT inserted.last_seq;",
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                // one statement instead of a batch of one insert per event. OPENJSON's WITH clause gives no array
                // index, so the outer OPENJSON reads each row's index ([key]) and object, and the inner one its
                // columns; an INSERT ... SELECT ... ORDER BY computes identity values in that order, so seq_id
                // numbers the rows as the unit of work made them. Text columns are NVARCHAR(MAX): a value longer
                // than its table column fails the insert instead of being cut by OPENJSON
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " SELECT CAST(e.id AS UNIQUEIDENTIFIER), e.stream_id, e.version, e.type, e.data, ?, ?,"
                        + " e.tenant_seq, e.correlation_id, e.causation_id, e.headers"
                        + " FROM OPENJSON(?) AS r CROSS APPLY OPENJSON(r.value) WITH (id NVARCHAR(36),"
                        + " stream_id NVARCHAR(MAX), version BIGINT, type NVARCHAR(MAX), data NVARCHAR(MAX),"
                        + " tenant_seq BIGINT, correlation_id NVARCHAR(MAX), causation_id NVARCHAR(MAX),"
                        + " headers NVARCHAR(MAX)) AS e"
                        + " ORDER BY CAST(r.[key] AS INT)",
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? ORDER BY version",
                PortableSql.selectAppendedSequences(t),
                ownDrawn("SELECT seq_id FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? AND version >= ? AND version <= ?"),
                "SELECT e.stream_id, e.version, e.seq_id FROM " + appendedEvents(t) + " WHERE e.tenant_id = ?",
                // every append of the unit of work in one round trip; still one applock per number inside it
                ownDrawn("SELECT e.seq_id FROM " + appendedEvents(t) + " WHERE e.tenant_id = ?"),
                PortableSql.selectPassedMark(t),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id,"
                        + " causation_id, headers FROM " + t.events() + " WHERE tenant_id = ? AND correlation_id = ?"
                        + " AND correlation_id IS NOT NULL ORDER BY seq_id",
                PortableSql.selectEventNumbers(t));
    }
}
