package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.runtime.dialect.ArrayColumn;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one JSON parameter SQL Server's {@code ...OfMany} statements read through OPENJSON, read back here by a JSON
 * parser (Parsson): every value must come back exactly as it went in, since no server runs here. Runs without a
 * database.
 */
class JsonRowsTest {

    private static JsonArray parse(String json) {
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            return reader.readArray();
        }
    }

    /** Column {@code name} of every row, read back as Java values: strings, longs, nulls. */
    private static List<Object> column(JsonArray rows, String name) {
        List<Object> values = new ArrayList<>();
        for (JsonValue row : rows) {
            JsonValue value = row.asJsonObject().get(name);
            values.add(switch (value.getValueType()) {
                case NULL -> null;
                case STRING -> ((JsonString) value).getString();
                case NUMBER -> ((JsonNumber) value).longValueExact();
                default -> throw new AssertionError(name + " holds " + value);
            });
        }
        return values;
    }

    @Test
    void everyTextComesBackExactlyNullsQuotesControlCharactersUnicodeAndTimestampsWithOffsets() {
        List<String> texts = Arrays.asList(null, "", "plain", "say \"hi\"", "back\\slash \\u0041 not an escape",
                "tab\tline\nreturn\rnul\u0000unit\u001fdel\u007f", "é ß 漢字 😀 \u2028\u2029", "trailing space ",
                "{\"at\":\"2026-03-01T12:00:00.123456789+02:00\",\"z\":\"2026-03-01T10:00:00Z\"}", "'single' -- ; GO",
                "\uD83D", "</script>");
        String json = JsonRows.of(List.of(new ArrayColumn("data", "text", texts)));
        assertThat(column(parse(json), "data")).isEqualTo(texts);
    }

    @Test
    void numbersAreExactJsonNumbersAcrossTheWholeLongRangeAndNullsStayNull() {
        List<Long> numbers = Arrays.asList(0L, 1L, -1L, null, 9_007_199_254_740_993L, Long.MAX_VALUE, Long.MIN_VALUE);
        String json = JsonRows.of(List.of(new ArrayColumn("tenant_seq", "bigint", numbers)));
        assertThat(json).contains("\"tenant_seq\":9007199254740993").contains("\"tenant_seq\":null")
                .contains("\"tenant_seq\":" + Long.MIN_VALUE);
        assertThat(column(parse(json), "tenant_seq")).isEqualTo(new ArrayList<Object>(numbers));
    }

    @Test
    void aLargeEventTravelsWholeAsOneString() {
        StringBuilder data = new StringBuilder("{\"lines\":[");
        for (int i = 0; i < 50_000; i++) {
            data.append(i == 0 ? "" : ",").append("{\"n\":").append(i).append(",\"text\":\"\\\"q\\\" ü\"}");
        }
        String event = data.append("]}").toString();
        assertThat(event.length()).isGreaterThan(1_000_000);
        JsonArray rows = parse(JsonRows.of(List.of(new ArrayColumn("data", "text", List.of(event, "{}")))));
        assertThat(column(rows, "data")).containsExactly(event, "{}");
    }

    @Test
    void rowsKeepTheirOrderAndEachRowIsOneObjectOfEveryColumn() {
        String json = JsonRows.of(List.of(
                new ArrayColumn("stream_id", "varchar", List.of("b", "a", "c")),
                new ArrayColumn("first_version", "bigint", List.of(3L, 1L, 7L)),
                new ArrayColumn("last_version", "bigint", List.of(4L, 1L, 9L))));
        assertThat(json).isEqualTo("[{\"stream_id\":\"b\",\"first_version\":3,\"last_version\":4},"
                + "{\"stream_id\":\"a\",\"first_version\":1,\"last_version\":1},"
                + "{\"stream_id\":\"c\",\"first_version\":7,\"last_version\":9}]");
        JsonObject last = parse(json).getJsonObject(2);
        assertThat(last.keySet()).containsExactly("stream_id", "first_version", "last_version");
        assertThat(JsonRows.of(List.of(new ArrayColumn("id", "varchar", List.of())))).isEqualTo("[]");
    }

    @Test
    void columnsOfDifferentLengthsOrValuesOtherThanTextAndNumbersAreRefusedNamingTheColumn() {
        assertThatThrownBy(() -> JsonRows.of(List.of(new ArrayColumn("id", "varchar", List.of("a", "b")),
                new ArrayColumn("n", "bigint", List.of(1L)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("column n has 1 values");
        // timestamps are bound as DATETIMEOFFSET parameters of their own, never written into the rows
        assertThatThrownBy(() -> JsonRows.of(List.of(new ArrayColumn("timestamp", "varchar",
                List.of(OffsetDateTime.parse("2026-03-01T12:00:00+02:00"))))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("column timestamp")
                .hasMessageContaining("java.time.OffsetDateTime");
    }
}
