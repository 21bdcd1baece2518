package dev.ferret.runtime.dialect.h2;

import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonReaderFactory;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.util.Map;

/**
 * Java functions H2 calls from SQL (registered with {@code CREATE ALIAS}). H2 has no JSON path functions; these
 * give it the one the property filter needs, with the same text semantics as PostgreSQL's {@code ->>} and SQL
 * Server's {@code JSON_VALUE}. They run inside H2, so H2 must be embedded in the store's JVM.
 */
public final class H2JsonFunctions {

    private static final JsonReaderFactory READERS = Json.createReaderFactory(Map.of());

    private H2JsonFunctions() {
    }

    /**
     * The text of the property at {@code path} (names joined by dots, which no name holds) of the JSON object
     * {@code json}, or null when absent, null, or under something that is not an object.
     */
    public static String text(String json, String path) {
        if (json == null || path == null) {
            return null;
        }
        JsonValue value;
        try (JsonReader reader = READERS.createReader(new StringReader(json))) {
            value = reader.readValue();
        }
        for (String name : path.split("\\.")) {
            if (value.getValueType() != JsonValue.ValueType.OBJECT) {
                return null;
            }
            value = ((JsonObject) value).get(name);
            if (value == null) {
                return null;
            }
        }
        // no switch on the enum here: javac compiles it to a helper class loaded on first use, and H2 keeps this
        // method as first bound, through the class loader of the application that created the alias. In an
        // application server, a later deployment on the same database would then load that helper through the
        // closed loader of an undeployed one (NoClassDefFoundError). Everything this method touches beyond the
        // JSON-P API is in this one class.
        JsonValue.ValueType type = value.getValueType();
        if (type == JsonValue.ValueType.NULL) {
            return null;
        }
        if (type == JsonValue.ValueType.STRING) {
            return ((JsonString) value).getString();
        }
        if (type == JsonValue.ValueType.NUMBER) {
            return ((JsonNumber) value).toString();
        }
        if (type == JsonValue.ValueType.TRUE) {
            return "true";
        }
        if (type == JsonValue.ValueType.FALSE) {
            return "false";
        }
        return value.toString();
    }
}
