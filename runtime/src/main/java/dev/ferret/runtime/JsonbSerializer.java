package dev.ferret.runtime;

import dev.ferret.FerretException;
import dev.ferret.JsonSerializer;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbConfig;
import jakarta.json.bind.JsonbException;

/** The default serializer: one shared, thread-safe Jakarta JSON-B instance (Yasson in SE). */
public final class JsonbSerializer implements JsonSerializer, AutoCloseable {

    private final Jsonb jsonb;

    public JsonbSerializer() {
        this(JsonbBuilder.create(new JsonbConfig()));
    }

    public JsonbSerializer(Jsonb jsonb) {
        this.jsonb = jsonb;
    }

    @Override
    public String toJson(Object value) {
        try {
            return jsonb.toJson(value);
        } catch (JsonbException e) {
            throw new FerretException("cannot serialize " + value.getClass().getName() + " to JSON: "
                    + e.getMessage(), e);
        }
    }

    @Override
    public <T> T fromJson(String json, Class<T> type) {
        try {
            return jsonb.fromJson(json, type);
        } catch (JsonbException e) {
            throw new FerretException("cannot read JSON as " + type.getName() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() throws Exception {
        jsonb.close();
    }
}
