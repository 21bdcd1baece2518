package dev.ferret.runtime.events;

import dev.ferret.runtime.dialect.ArrayColumn;
import dev.ferret.runtime.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The events of one unit of work as columns, for {@code EventSql.insertEventsOfMany}: each column one array
 * parameter (on SQL Server, all of them one JSON parameter), so a save of any number of events is one statement.
 * Owned by the saving thread.
 */
final class EventColumns {

    private final List<UUID> ids;
    private final List<String> streamIds;
    private final List<Long> versions;
    private final List<String> types;
    private final List<String> data;
    private final List<Long> tenantSeqs;
    private final List<String> correlationIds;
    private final List<String> causationIds;
    private final List<String> headers;

    EventColumns(int expected) {
        ids = new ArrayList<>(expected);
        streamIds = new ArrayList<>(expected);
        versions = new ArrayList<>(expected);
        types = new ArrayList<>(expected);
        data = new ArrayList<>(expected);
        tenantSeqs = new ArrayList<>(expected);
        correlationIds = new ArrayList<>(expected);
        causationIds = new ArrayList<>(expected);
        headers = new ArrayList<>(expected);
    }

    void add(UUID id, String streamId, long version, String type, String json, Long tenantSeq, String correlationId,
             String causationId, String headersJson) {
        ids.add(id);
        streamIds.add(streamId);
        versions.add(version);
        types.add(type);
        data.add(json);
        tenantSeqs.add(tenantSeq);
        correlationIds.add(correlationId);
        causationIds.add(causationId);
        headers.add(headersJson);
    }

    int size() {
        return ids.size();
    }

    /** The event ids in the order added. */
    List<UUID> ids() {
        return ids;
    }

    /**
     * Binds events {@code from} (inclusive) to {@code to} as the nine columns of {@code insertEventsOfMany} from
     * {@code index} on, ids and JSON as text.
     */
    void bind(Connection c, Dialect dialect, PreparedStatement ps, int index, int from, int to) throws SQLException {
        dialect.bindColumns(c, ps, index, List.of(
                new ArrayColumn("id", "varchar", ids.subList(from, to).stream().map(UUID::toString).toList()),
                new ArrayColumn("stream_id", "varchar", streamIds.subList(from, to)),
                new ArrayColumn("version", "bigint", versions.subList(from, to)),
                new ArrayColumn("type", "varchar", types.subList(from, to)),
                new ArrayColumn("data", "text", data.subList(from, to)),
                new ArrayColumn("tenant_seq", "bigint", tenantSeqs.subList(from, to)),
                new ArrayColumn("correlation_id", "varchar", correlationIds.subList(from, to)),
                new ArrayColumn("causation_id", "varchar", causationIds.subList(from, to)),
                new ArrayColumn("headers", "text", headers.subList(from, to))));
    }
}
