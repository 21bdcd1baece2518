package dev.ferret.runtime.events;

import dev.ferret.EventEnvelope;
import dev.ferret.JsonSerializer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * The columns of an event row as every statement that reads events returns them: (seq_id, id, stream_id, version,
 * type, data, timestamp, tenant_id), and for a tenant's page its tenant_seq after them.
 */
public final class EventRows {

    public static final int SEQUENCE = 1;
    public static final int ID = 2;
    public static final int STREAM = 3;
    public static final int VERSION = 4;
    public static final int TYPE = 5;
    public static final int DATA = 6;
    public static final int TIMESTAMP = 7;
    public static final int TENANT = 8;
    /** Only in a tenant's page: the tenant's own sequence number of the event. */
    public static final int TENANT_SEQUENCE = 9;

    private EventRows() {
    }

    /**
     * Reads the event on the current row, as its type of today: an event stored under an alias that is upcast is
     * read through its upcasts and carries the alias they lead to.
     *
     * @throws dev.ferret.UnknownEventTypeException when its type alias is not registered
     */
    public static EventEnvelope read(ResultSet rs, EventTypes types, JsonSerializer serializer) throws SQLException {
        long sequence = rs.getLong(SEQUENCE);
        String alias = rs.getString(TYPE);
        Object data = types.read(alias, rs.getString(DATA), sequence, serializer);
        return new EventEnvelope(sequence, UUID.fromString(rs.getString(ID)), rs.getString(STREAM),
                rs.getLong(VERSION), types.currentAlias(alias), rs.getObject(TIMESTAMP, OffsetDateTime.class),
                rs.getString(TENANT), data);
    }
}
