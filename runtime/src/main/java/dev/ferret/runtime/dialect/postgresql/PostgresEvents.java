package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.PortableSql;
import dev.ferret.runtime.dialect.TableNames;

/**
 * PostgreSQL's statements of the event store: stream heads, event inserts as one statement over arrays, reads of a
 * stream, and the owner locks of appended sequence numbers as two-int advisory locks. Golden-tested with the rest of
 * the dialect.
 */
final class PostgresEvents {

    /** The ranges of {@link Dialect#bindAppendedRanges}, as rows {@code a(stream_id, first_version, last_version)}. */
    private static final String APPENDED_RANGES = "unnest(CAST(? AS varchar[]), CAST(? AS bigint[]),"
            + " CAST(? AS bigint[])) AS a(stream_id, first_version, last_version)";

    private PostgresEvents() {
    }

    static EventSql statements(TableNames t) {
        return new EventSql(
                "INSERT INTO " + t.streams() + " (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (?, ?, ?, ?, ?, ?)",
                "INSERT INTO " + t.streams() + " AS s (id, tenant_id, type, version, timestamp, created)"
                        + " VALUES (?, ?, ?, ?, ?, ?)"
                        + " ON CONFLICT (tenant_id, id) DO UPDATE"
                        + " SET version = s.version + EXCLUDED.version, timestamp = EXCLUDED.timestamp"
                        + " RETURNING version",
                // ordered by id: units of work that share streams lock their rows in one order
                "INSERT INTO " + t.streams() + " AS s (id, tenant_id, type, version, timestamp, created)"
                        + " SELECT u.id, ?, u.type, u.n, ?, ? FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[]),"
                        + " CAST(? AS bigint[])) AS u(id, type, n) ORDER BY u.id"
                        + " ON CONFLICT (tenant_id, id) DO UPDATE"
                        + " SET version = s.version + EXCLUDED.version, timestamp = EXCLUDED.timestamp"
                        + " RETURNING id, version",
                "UPDATE " + t.streams() + " SET version = ?, timestamp = ?"
                        + " WHERE tenant_id = ? AND id = ? AND version = ?",
                "SELECT version, type, timestamp, archived FROM " + t.streams() + " WHERE tenant_id = ? AND id = ?",
                "INSERT INTO " + t.tenantSequences() + " AS s (tenant_id, last_seq, last_updated) VALUES (?, ?, ?)"
                        + " ON CONFLICT (tenant_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq,"
                        + " last_updated = EXCLUDED.last_updated RETURNING last_seq",
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " VALUES (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?::jsonb)",
                // one statement instead of a batch of one insert per event; the identity numbers rows in the
                // arrays' order, which is each stream's version order
                "INSERT INTO " + t.events() + " (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq,"
                        + " correlation_id, causation_id, headers)"
                        + " SELECT CAST(u.id AS uuid), u.stream_id, u.version, u.type, CAST(u.data AS jsonb), ?, ?,"
                        + " u.tenant_seq, u.correlation_id, u.causation_id, CAST(u.headers AS jsonb)"
                        + " FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS bigint[]),"
                        + " CAST(? AS varchar[]), CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS varchar[]),"
                        + " CAST(? AS varchar[]), CAST(? AS text[])) WITH ORDINALITY"
                        + " AS u(id, stream_id, version, type, data, tenant_seq, correlation_id, causation_id, headers, n)"
                        + " ORDER BY u.n",
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, "
                        + "headers FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? ORDER BY version",
                PortableSql.selectAppendedSequences(t),
                // two-int advisory keys (store, sequence number): a separate key space from the bigint keys of the
                // shard and migration locks; numbers 2^31 apart share a lock, never two in flight at once
                "SELECT MIN(seq_id), COUNT(pg_advisory_xact_lock(CAST(? AS integer),"
                        + " CAST(seq_id % 2147483648 AS integer))) FROM " + t.events()
                        + " WHERE tenant_id = ? AND stream_id = ? AND version >= ? AND version <= ?",
                "SELECT e.stream_id, e.version, e.seq_id FROM " + APPENDED_RANGES + " JOIN " + t.events() + " e"
                        + " ON e.stream_id = a.stream_id AND e.version >= a.first_version"
                        + " AND e.version <= a.last_version WHERE e.tenant_id = ?",
                "SELECT MIN(e.seq_id), COUNT(pg_advisory_xact_lock(CAST(? AS integer),"
                        + " CAST(e.seq_id % 2147483648 AS integer))) FROM " + APPENDED_RANGES + " JOIN " + t.events()
                        + " e ON e.stream_id = a.stream_id AND e.version >= a.first_version"
                        + " AND e.version <= a.last_version WHERE e.tenant_id = ?",
                PortableSql.selectPassedMark(t),
                "SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id,"
                        + " causation_id, headers FROM " + t.events() + " WHERE tenant_id = ? AND correlation_id = ?"
                        + " AND correlation_id IS NOT NULL ORDER BY seq_id",
                PortableSql.selectEventNumbers(t));
    }
}
