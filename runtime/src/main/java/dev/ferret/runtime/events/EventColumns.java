package dev.ferret.runtime.events;

import dev.ferret.runtime.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The events of one unit of work as columns, for {@code EventSql.insertEventsOfMany}: each column one array
 * parameter, so a save of any number of events is one statement. Owned by the saving thread.
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

    /** Binds events {@code from} (inclusive) to {@code to} as nine array parameters from {@code index} on. */
    void bind(Connection c, Dialect dialect, PreparedStatement ps, int index, int from, int to) throws SQLException {
        dialect.bindArray(c, ps, index, "varchar", ids.subList(from, to).stream().map(UUID::toString).toArray());
        dialect.bindArray(c, ps, index + 1, "varchar", streamIds.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 2, "bigint", versions.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 3, "varchar", types.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 4, "text", data.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 5, "bigint", tenantSeqs.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 6, "varchar", correlationIds.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 7, "varchar", causationIds.subList(from, to).toArray());
        dialect.bindArray(c, ps, index + 8, "text", headers.subList(from, to).toArray());
    }
}
