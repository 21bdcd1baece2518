package dev.ferret.runtime.events;

import dev.ferret.EventEnvelope;
import dev.ferret.JsonSerializer;
import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The columns of an event row as every statement that reads events returns them: (seq_id, id, stream_id, version,
 * type, data, timestamp, tenant_id, correlation_id, causation_id, headers), and for a tenant's page its tenant_seq
 * after them. Headers are stored as a JSON object of strings, or null when an event has none.
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
    public static final int CORRELATION = 9;
    public static final int CAUSATION = 10;
    public static final int HEADERS = 11;
    /** Only in a tenant's page: the tenant's own sequence number of the event. */
    public static final int TENANT_SEQUENCE = 12;

    private EventRows() {
    }

    /**
     * Reads the event on the current row, as its type of today: an event stored under an alias that is upcast is
     * read through its upcasts and carries the alias they lead to.
     *
     * @throws dev.ferret.UnknownEventTypeException when its type alias is not registered
     */
    public static EventEnvelope read(ResultSet rs, EventTypes types, JsonSerializer serializer) throws SQLException {
        return stored(rs).read(types, serializer);
    }

    /** The event on the current row as stored, its data not read yet. */
    public static StoredEvent stored(ResultSet rs) throws SQLException {
        return new StoredEvent(rs.getLong(SEQUENCE), rs.getString(ID), rs.getString(STREAM), rs.getLong(VERSION),
                rs.getString(TYPE), rs.getString(DATA), rs.getObject(TIMESTAMP, OffsetDateTime.class),
                rs.getString(TENANT), rs.getString(CORRELATION), rs.getString(CAUSATION), rs.getString(HEADERS));
    }

    /** The stored form of {@code headers}: a JSON object of strings, or null for none. */
    public static String headersJson(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return null;
        }
        JsonObjectBuilder object = Json.createObjectBuilder();
        headers.forEach(object::add);
        return object.build().toString();
    }

    static Map<String, String> headersOf(String json) {
        if (json == null) {
            return Map.of();
        }
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            // an engine may keep a bound SQL NULL as the JSON literal null (H2 before 2.3 does, through FORMAT JSON)
            JsonValue stored = reader.readValue();
            if (stored.getValueType() != JsonValue.ValueType.OBJECT) {
                return Map.of();
            }
            Map<String, String> headers = new LinkedHashMap<>();
            stored.asJsonObject().forEach((name, value) -> headers.put(name, ((JsonString) value).getString()));
            return headers;
        }
    }
}
