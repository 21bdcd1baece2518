package dev.ferret.runtime.dialect.h2;

import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.TableNames;

/** Every statement of H2's event store (see {@link EventSql}), as PostgresEvents and SqlServerEvents hold theirs. */
final class H2Events {

    /** What a MERGE source casts a bound string to: see {@link H2Dialect#TEXT}. */
    private static final String TEXT = H2Dialect.TEXT;

    private H2Events() {
    }

    static EventSql statements(TableNames t) {
        return new EventSql(
                "INSERT INTO " + t.streams() + " (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (?, ?, ?, ?, ?, ?)",
                "SELECT version FROM FINAL TABLE (MERGE INTO " + t.streams() + " AS s"
                        + " USING (VALUES (CAST(? AS " + TEXT + "), CAST(? AS " + TEXT + "), CAST(? AS " + TEXT + "),"
                        + " CAST(? AS BIGINT), CAST(? AS TIMESTAMP WITH TIME ZONE), CAST(? AS TIMESTAMP WITH TIME ZONE)))"
                        + " AS src (id, tenant_id, type, version, timestamp, created)"
                        + " ON s.tenant_id = src.tenant_id AND s.id = src.id"
                        + " WHEN MATCHED THEN UPDATE SET version = s.version + src.version, timestamp = src.timestamp"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (src.id, src.tenant_id, src.type, src.version, src.timestamp, src.created))",
                "SELECT id, version FROM FINAL TABLE (MERGE INTO " + t.streams() + " AS s"
                        + " USING (SELECT u.id, CAST(?1 AS " + TEXT + ") AS tenant_id, u.type, u.n AS version,"
                        + " CAST(?2 AS TIMESTAMP WITH TIME ZONE) AS timestamp,"
                        + " CAST(?3 AS TIMESTAMP WITH TIME ZONE) AS created"
                        + " FROM UNNEST(CAST(?4 AS " + TEXT + " ARRAY), CAST(?5 AS " + TEXT + " ARRAY),"
                        + " CAST(?6 AS BIGINT ARRAY)) AS u(id, type, n)) AS src"
                        + " ON s.tenant_id = src.tenant_id AND s.id = src.id"
                        + " WHEN MATCHED THEN UPDATE SET version = s.version + src.version, timestamp = src.timestamp"
                        + " WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (src.id, src.tenant_id, src.type, src.version, src.timestamp, src.created))",
                "UPDATE " + t.streams() + " SET version = ?, timestamp = ?"
                        + " WHERE tenant_id = ? AND id = ? AND version = ?",
                "SELECT version, type, timestamp, archived FROM " + t.streams() + " WHERE tenant_id = ? AND id = ?",
                "SELECT last_seq FROM FINAL TABLE (MERGE INTO " + t.tenantSequences() + " AS s"
                        + " USING (VALUES (CAST(? AS " + TEXT + "), CAST(? AS BIGINT),"
                        + " CAST(? AS TIMESTAMP WITH TIME ZONE))) AS src (tenant_id, drawn, last_updated)"
                        + " ON s.tenant_id = src.tenant_id"
                        + " WHEN MATCHED THEN UPDATE SET last_seq = s.last_seq + src.drawn, last_updated = src.last_updated"
                        + " WHEN NOT MATCHED THEN INSERT (tenant_id, last_seq, last_updated)"
                        + " VALUES (src.tenant_id, src.drawn, src.last_updated))",
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " VALUES (?, ?, ?, ?, ? FORMAT JSON, ?, ?, ?, ?, ?, ? FORMAT JSON)",
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " SELECT CAST(u.id AS UUID), u.stream_id, u.version, u.type, u.data FORMAT JSON,"
                        + " CAST(?1 AS TIMESTAMP WITH TIME ZONE), CAST(?2 AS " + TEXT + "), u.tenant_seq,"
                        + " u.correlation_id, u.causation_id, u.headers FORMAT JSON"
                        + " FROM UNNEST(CAST(?3 AS " + TEXT + " ARRAY), CAST(?4 AS " + TEXT + " ARRAY),"
                        + " CAST(?5 AS BIGINT ARRAY), CAST(?6 AS " + TEXT + " ARRAY), CAST(?7 AS VARCHAR ARRAY),"
                        + " CAST(?8 AS BIGINT ARRAY), CAST(?9 AS " + TEXT + " ARRAY), CAST(?10 AS " + TEXT + " ARRAY),"
                        + " CAST(?11 AS VARCHAR ARRAY)) WITH ORDINALITY"
                        + " AS u(id, stream_id, version, type, data, tenant_seq, correlation_id, causation_id, headers, n)"
                        + " ORDER BY u.n",
                "SELECT seq_id, id, stream_id, version, type, CAST(data AS VARCHAR), timestamp, tenant_id, correlation_id, causation_id, "
                        + "CAST(headers AS VARCHAR) FROM "
                        + t.events() + " WHERE tenant_id = ? AND stream_id = ? ORDER BY version",
                PortableSql.selectAppendedSequences(t),
                // the owners of numbers in flight live in this JVM (H2SequenceOwners), not in the database
                "",
                "SELECT e.stream_id, e.version, e.seq_id FROM UNNEST(CAST(? AS " + TEXT + " ARRAY),"
                        + " CAST(? AS BIGINT ARRAY), CAST(? AS BIGINT ARRAY)) AS a(stream_id, first_version,"
                        + " last_version) JOIN " + t.events() + " e ON e.stream_id = a.stream_id"
                        + " AND e.version >= a.first_version AND e.version <= a.last_version WHERE e.tenant_id = ?",
                "",
                "",
                "SELECT seq_id, id, stream_id, version, type, CAST(data AS VARCHAR), timestamp, tenant_id, correlation_id,"
                        + " causation_id, CAST(headers AS VARCHAR) FROM " + t.events()
                        + " WHERE tenant_id = ? AND correlation_id = ? AND correlation_id IS NOT NULL ORDER BY seq_id",
                PortableSql.selectEventNumbers(t));
    }
}
