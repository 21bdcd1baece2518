package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.TableNames;

/**
 * SQL Server's statements of the event store: stream heads as MERGE, one statement per stream (mssql-jdbc takes no
 * array parameter), event inserts as a JDBC batch, reads of a stream, and the owner locks of appended sequence
 * numbers as application locks. Golden-tested with the rest of the dialect.
 */
final class SqlServerEvents {

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
                // no array parameters in mssql-jdbc: one upsert per stream
                "",
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
                // mssql-jdbc takes no array parameters: a JDBC batch of insertEvent
                "",
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers FROM " + t.events()
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
                // mssql-jdbc has no array parameters: one statement per append (table-valued parameters need a
                // table type created in the schema, which this dialect does not own yet)
                "",
                "",
                PortableSql.selectPassedMark(t),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id,"
                        + " causation_id, headers FROM " + t.events() + " WHERE tenant_id = ? AND correlation_id = ?"
                        + " AND correlation_id IS NOT NULL ORDER BY seq_id",
                PortableSql.selectEventNumbers(t));
    }
}
