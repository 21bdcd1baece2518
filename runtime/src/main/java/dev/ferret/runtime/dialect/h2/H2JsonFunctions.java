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
        return switch (value.getValueType()) {
            case NULL -> null;
            case STRING -> ((JsonString) value).getString();
            case NUMBER -> ((JsonNumber) value).toString();
            case TRUE -> "true";
            case FALSE -> "false";
            default -> value.toString();
        };
    }
}
