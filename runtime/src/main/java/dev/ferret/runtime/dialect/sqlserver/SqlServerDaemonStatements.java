package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.TableNames;

/**
 * SQL Server's statements of the async daemon: the high water mark and its holes, page loads, progression rows,
 * dead letters, HotCold heartbeats and the claim of a hole's owner locks. Golden-tested with the rest of the
 * dialect.
 */
final class SqlServerDaemonStatements {

    private SqlServerDaemonStatements() {
    }

    static DaemonSql statements(TableNames t) {
        // READPAST: under locking READ COMMITTED an uncommitted insert would block the read; skipping it shows it
        // as the gap it is until it commits. READPAST is refused (error 650) under READ_COMMITTED_SNAPSHOT ON with
        // a READ COMMITTED session; READCOMMITTEDLOCK makes the read a locking one whatever that option says
        String events = t.events() + " WITH (READCOMMITTEDLOCK, READPAST)";
        return new DaemonSql(
                PortableSql.highWaterMark(events),
                PortableSql.listGaps(events),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers FROM " + t.events()
                        + " WHERE seq_id > ? AND seq_id <= ? ORDER BY seq_id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY",
                // READPAST: a tenant whose append is in flight keeps its mark this round instead of blocking the read
                "SELECT tenant_id, last_seq FROM " + t.tenantSequences() + " WITH (READCOMMITTEDLOCK, READPAST)",
                // no READPAST: rows at or below a tenant's mark are committed, but one that a DBA's fix-up (or a
                // delete that rolls back) has locked would be skipped, and a short page reads as "all up to the mark"
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers, tenant_seq FROM " + t.events()
                        // the filtered index's own predicate, spelled out: a parameterized range alone does not
                        // let the optimizer match a filtered index
                        + " WHERE tenant_id = ? AND tenant_seq IS NOT NULL AND tenant_seq > ? AND tenant_seq <= ?"
                        + " ORDER BY tenant_seq"
                        + " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY",
                PortableSql.selectProgression(t),
                PortableSql.selectProgressionStamp(t),
                "MERGE " + t.progression() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?, ?)) AS source (name, floor, last_seq_id, last_updated)"
                        + " ON target.name = source.name" + SqlServerDialect.KEY
                        + " WHEN MATCHED AND target.last_seq_id = source.floor THEN UPDATE"
                        + " SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED AND source.floor = 0 THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (source.name, source.last_seq_id, source.last_updated);",
                "MERGE " + t.progression() + " WITH (HOLDLOCK) AS target"
                        + " USING (VALUES (?, ?, ?)) AS source (name, last_seq_id, last_updated)"
                        + " ON target.name = source.name" + SqlServerDialect.KEY
                        + " WHEN MATCHED AND target.last_seq_id < source.last_seq_id THEN UPDATE"
                        + " SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (name, last_seq_id, last_updated)"
                        + " VALUES (source.name, source.last_seq_id, source.last_updated);",
                PortableSql.deleteProgression(t),
                PortableSql.insertDeadLetter(t),
                PortableSql.countLiveNodes(t),
                PortableSql.listNodes(t),
                PortableSql.deleteDeadNodes(t),
                // READPAST: a row whose append has not registered it yet is skipped, not waited for; that append
                // then waits on the claim's applock and finds the mark raised
                PortableSql.countSequences(events),
                // APPLOCK_TEST first, so a held lock is seen without a request queued behind its owner; the
                // lock is then taken without waiting (@LockTimeout = 0), since the owner may commit in between.
                // The SELECT from a table comes first because this batch opens the claim's transaction: under the
                // driver's implicit transactions an EXEC opens none (sp_getapplock would return -999), and an
                // explicit BEGIN TRANSACTION would open two nested ones that the driver's commit ends only one of
                "SET NOCOUNT ON; DECLARE @seq bigint = ?, @to bigint = ?, @prefix nvarchar(200) = ?,"
                        + " @resource nvarchar(255), @result int, @held int = 0, @opened int;"
                        + " SELECT @opened = COUNT(*) FROM " + t.progression() + " WHERE name = N'HighWaterMark';"
                        + " WHILE @seq <= @to AND @held = 0 BEGIN"
                        + " SET @resource = CONCAT(@prefix, @seq);"
                        + " IF APPLOCK_TEST('public', @resource, 'Exclusive', 'Transaction') = 0 SET @held = 1"
                        + " ELSE BEGIN"
                        + " EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive',"
                        + " @LockOwner = 'Transaction', @LockTimeout = 0;"
                        + " IF @result < 0 SET @held = 1; END;"
                        + " SET @seq = @seq + 1; END;"
                        + " SELECT @held;",
                PortableSql.selectEveryProgression(t));
    }
}
