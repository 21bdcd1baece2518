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

    /** The text of top-level {@code property} of the JSON object {@code json}, or null when absent or null. */
    public static String text(String json, String property) {
        if (json == null || property == null) {
            return null;
        }
        JsonValue value;
        try (JsonReader reader = READERS.createReader(new StringReader(json))) {
            JsonValue root = reader.readValue();
            if (root.getValueType() != JsonValue.ValueType.OBJECT) {
                return null;
            }
            value = ((JsonObject) root).get(property);
        }
        if (value == null) {
            return null;
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
