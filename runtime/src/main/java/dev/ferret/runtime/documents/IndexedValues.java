package dev.ferret.runtime.documents;

import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.IndexKeyLimit;
import dev.ferret.runtime.dialect.ValueKind;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.math.BigDecimal;
import java.util.List;

/**
 * One declared index's keys checked against the engine's {@link IndexKeyLimit} before a document is written: a key
 * past the engine's size, or a number past the indexed type, is refused naming the index, the path and the limit,
 * and the unit of work or daemon page that wrote it rolls back whole. Immutable; read from any thread.
 */
final class IndexedValues {

    private final String indexName;
    private final List<DocumentIndexSql.Key> keys;
    private final List<String> pathTexts;
    private final boolean unique;
    private final IndexKeyLimit limit;
    /** The key bytes no value can change: the parts of fixed size. */
    private final int fixedBytes;

    IndexedValues(String indexName, List<DocumentIndexSql.Key> keys, List<String> pathTexts, boolean unique,
                  IndexKeyLimit limit) {
        this.indexName = indexName;
        this.keys = List.copyOf(keys);
        this.pathTexts = List.copyOf(pathTexts);
        this.unique = unique;
        this.limit = limit;
        this.fixedBytes = keys.stream().mapToInt(key -> limit.fixedBytes(key.kind())).sum();
    }

    /**
     * Refuses {@code json}, the document {@code id} of tenant {@code tenantId}, when its entry in this index would not
     * fit.
     *
     * @throws IllegalArgumentException naming the index, the path, the size and the engine's limit
     */
    void check(String documentName, String tenantId, String id, String json) {
        // a document whose whole text fits needs no parsing: no key of it can be longer
        int idBytes = limit.textBytes(id);
        int bound = limit.textBytes(tenantId) + idBytes + fixedBytes + (limit.utf16() ? 2 : 3) * json.length();
        boolean hasNumber = limit.numberBound() != null && keys.stream().anyMatch(k -> k.kind() == ValueKind.NUMBER);
        if (bound <= limit.maxBytes() && !hasNumber) {
            return;
        }
        JsonValue document;
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            document = reader.readValue();
        }
        int bytes = limit.textBytes(tenantId) + fixedBytes;
        boolean allPresent = true;
        for (int i = 0; i < keys.size(); i++) {
            DocumentIndexSql.Key key = keys.get(i);
            JsonValue value = at(document, key.path());
            if (value == null || value.getValueType() == JsonValue.ValueType.NULL) {
                allPresent = false;
                continue;
            }
            if (key.kind() == ValueKind.NUMBER && value instanceof JsonNumber number
                    && !limit.fits(number.bigDecimalValue())) {
                throw refused(documentName, tenantId, id, "the number at '" + pathTexts.get(i) + "' ("
                        + magnitude(number.bigDecimalValue()) + ") is past what " + limit.engine()
                        + " indexes there (below 10^" + (limit.numberBound().precision() - 1) + ")");
            }
            if (key.kind() == ValueKind.TEXT) {
                bytes += limit.textBytes(value instanceof JsonString text ? text.getString() : value.toString());
            }
        }
        if (!unique || !allPresent) {
            bytes += idBytes;
        }
        if (bytes > limit.maxBytes()) {
            throw refused(documentName, tenantId, id, "its key would take " + bytes + " bytes, and " + limit.engine()
                    + " holds at most " + limit.maxBytes() + " (" + (limit.utf16() ? "2 bytes a UTF-16 unit"
                    : "UTF-8") + "; paths " + String.join(", ", pathTexts) + ")");
        }
    }

    private IllegalArgumentException refused(String documentName, String tenantId, String id, String why) {
        return new IllegalArgumentException("document " + documentName + " '" + id + "' of tenant '" + tenantId
                + "' cannot be written: index " + indexName + " cannot hold it, " + why + "; nothing of the unit of"
                + " work is written");
    }

    /** A number's size without printing it whole (a value is the user's data, not a log's). */
    private static String magnitude(BigDecimal number) {
        int digits = number.precision() - number.scale();
        return digits + " integer digits";
    }

    private static JsonValue at(JsonValue document, List<String> path) {
        JsonValue current = document;
        for (String segment : path) {
            if (!(current instanceof JsonObject object)) {
                return null;
            }
            current = object.get(segment);
        }
        return current;
    }
}
