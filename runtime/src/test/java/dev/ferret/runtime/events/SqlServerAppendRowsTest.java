package dev.ferret.runtime.events;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.runtime.JsonbSerializer;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.sqlserver.SqlServerDialect;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A unit of work appended through SQL Server's dialect against a recording JDBC connection, since no SQL Server runs
 * here: which statements it sends, that every parameter marker of each is bound once, and that the one JSON parameter
 * of each {@code ...OfMany} statement carries exactly the columns its {@code OPENJSON ... WITH} clause reads, rows in
 * the unit of work's order. Runs without a database; what the server then does with them is the golden file's and
 * {@code docs/sqlserver-check.sql}'s to hold.
 */
class SqlServerAppendRowsTest {

    public record Noted(String text) {
    }

    private static final SqlServerDialect DIALECT = new SqlServerDialect();
    private static final TableNames NAMES = new TableNames("dbo", "pc_");
    private static final EventSql SQL = DIALECT.eventSql(NAMES);
    private static final OffsetDateTime NOW = OffsetDateTime.parse("2026-03-01T12:00:00.1234567+02:00");

    /** One statement as it ran: its text and its parameters by index. */
    private record Run(String sql, Map<Integer, Object> parameters) {
    }

    @Test
    void aUnitOfWorkOfTwoStreamsIsOneStatementPerStepEachMarkerBoundOnceAndRowsInCallOrder() throws Exception {
        List<Run> runs = new ArrayList<>();
        StreamAppends appends = new StreamAppends(DIALECT, SQL, NAMES, new EventTypes(Map.of("Noted", Noted.class)),
                new JsonbSerializer(), null, "tenant-ü", true);
        EventMetadata meta = EventMetadata.NONE.withCorrelationId("corr \"1\"").withHeader("h", "ẞ\t");
        appends.add("order-A", StreamAppends.ANY_VERSION, "Order", false,
                List.of(new Noted("first \"quoted\""), new Noted("😀 second")), meta);
        appends.add("order-b", StreamAppends.ANY_VERSION, null, false, List.of(new Noted("third")), EventMetadata.NONE);
        List<EventEnvelope> envelopes = new ArrayList<>();

        appends.write(connection(runs), NOW, new ArrayList<>(), envelopes);

        // partitioned: no owner locks (the tenant's numbers are gap-free), the envelopes' sequences read back
        assertThat(runs).extracting(Run::sql).containsExactly(SQL.nextTenantSequence(), SQL.upsertStreamsOfMany(),
                SQL.insertEventsOfMany(), SQL.selectAppendedSequencesOfMany());
        for (Run run : runs) {
            assertThat(run.parameters().keySet()).as(run.sql())
                    .containsExactlyElementsOf(IntStream.rangeClosed(1, markers(run.sql())).boxed().toList());
        }

        Run upsert = runs.get(1);
        assertThat(upsert.parameters()).containsEntry(1, "tenant-ü").containsEntry(2, NOW).containsEntry(3, NOW);
        JsonArray streams = rows(upsert, 4);
        assertThat(streams.getJsonObject(0)).isEqualTo(Json.createObjectBuilder().add("id", "order-A")
                .add("type", "Order").add("n", 2).build());
        assertThat(streams.getJsonObject(1).get("type")).isEqualTo(JsonValue.NULL);

        Run insert = runs.get(2);
        assertThat(insert.parameters()).containsEntry(1, NOW).containsEntry(2, "tenant-ü");
        JsonArray events = rows(insert, 3);
        assertThat(events.stream().map(e -> e.asJsonObject().getString("stream_id") + "@"
                + e.asJsonObject().getJsonNumber("version") + "#" + e.asJsonObject().getJsonNumber("tenant_seq")))
                .containsExactly("order-A@1#41", "order-A@2#42", "order-b@1#43");
        JsonObject first = events.getJsonObject(0);
        assertThat(first.getString("data")).isEqualTo("{\"text\":\"first \\\"quoted\\\"\"}");
        assertThat(events.getJsonObject(1).getString("data")).isEqualTo("{\"text\":\"😀 second\"}");
        assertThat(first.getString("type")).isEqualTo("Noted");
        assertThat(first.getString("correlation_id")).isEqualTo("corr \"1\"");
        assertThat(first.get("causation_id")).isEqualTo(JsonValue.NULL);
        assertThat(first.getString("headers")).isEqualTo("{\"h\":\"ẞ\\t\"}");
        assertThat(events.getJsonObject(2).get("headers")).isEqualTo(JsonValue.NULL);
        assertThat(envelopes).extracting(EventEnvelope::eventId).containsExactlyElementsOf(events.stream()
                .map(e -> UUID.fromString(e.asJsonObject().getString("id"))).toList());

        Run read = runs.get(3);
        assertThat(read.parameters()).containsEntry(2, "tenant-ü");
        assertThat(rows(read, 1).stream().map(JsonValue::toString)).containsExactly(
                "{\"stream_id\":\"order-A\",\"first_version\":1,\"last_version\":2}",
                "{\"stream_id\":\"order-b\",\"first_version\":1,\"last_version\":1}");
        assertThat(envelopes).extracting(EventEnvelope::sequence).containsExactly(100L, 101L, 102L);
    }

    @Test
    void anUnpartitionedUnitOfWorkTakesTheOwnerLocksOfAllItsAppendsInOneBatchThenReadsTheMark() throws Exception {
        List<Run> runs = new ArrayList<>();
        StreamAppends appends = new StreamAppends(DIALECT, SQL, NAMES, new EventTypes(Map.of("Noted", Noted.class)),
                new JsonbSerializer(), null, "*DEFAULT*", false);
        appends.add("a", StreamAppends.ANY_VERSION, null, false, List.of(new Noted("1"), new Noted("2")),
                EventMetadata.NONE);
        appends.add("b", StreamAppends.ANY_VERSION, null, false, List.of(new Noted("3")), EventMetadata.NONE);

        appends.write(connection(runs), NOW, new ArrayList<>(), null);

        assertThat(runs).extracting(Run::sql).containsExactly(SQL.upsertStreamsOfMany(), SQL.insertEventsOfMany(),
                SQL.ownAppendedSequencesOfMany(), SQL.selectPassedMark());
        Run own = runs.get(2);
        assertThat(own.parameters().keySet()).containsExactly(1, 2, 3);
        assertThat(own.parameters()).containsEntry(1, "ferret:seq:dbo.pc_:").containsEntry(3, "*DEFAULT*");
        assertThat(rows(own, 2).stream().map(JsonValue::toString)).containsExactly(
                "{\"stream_id\":\"a\",\"first_version\":1,\"last_version\":2}",
                "{\"stream_id\":\"b\",\"first_version\":1,\"last_version\":1}");
        assertThat(rows(runs.get(1), 3)).extracting(e -> e.asJsonObject().get("tenant_seq"))
                .containsOnly(JsonValue.NULL);
    }

    /** The JSON rows bound at {@code index}, each object's keys exactly the statement's OPENJSON WITH columns. */
    private static JsonArray rows(Run run, int index) {
        JsonArray rows;
        try (JsonReader reader = Json.createReader(new StringReader((String) run.parameters().get(index)))) {
            rows = reader.readArray();
        }
        assertThat(rows).isNotEmpty();
        List<String> columns = withColumns(run.sql());
        for (JsonValue row : rows) {
            assertThat(row.asJsonObject().keySet()).as(run.sql()).containsExactlyElementsOf(columns);
        }
        return rows;
    }

    /** The column names of the statement's one {@code OPENJSON(...) WITH (...)} clause, in order. */
    private static List<String> withColumns(String sql) {
        int open = sql.indexOf(") WITH (") + ") WITH ".length();
        int depth = 0;
        int close = open;
        for (; ; close++) {
            depth += sql.charAt(close) == '(' ? 1 : sql.charAt(close) == ')' ? -1 : 0;
            if (depth == 0) {
                break;
            }
        }
        return Arrays.stream(sql.substring(open + 1, close).split(", "))
                .map(definition -> definition.substring(0, definition.indexOf(' '))).toList();
    }

    /** The JDBC parameter markers of {@code sql}, outside its string literals. */
    private static int markers(String sql) {
        int count = 0;
        boolean quoted = false;
        for (char c : sql.toCharArray()) {
            quoted ^= c == '\'';
            count += !quoted && c == '?' ? 1 : 0;
        }
        return count;
    }

    /**
     * A connection whose statements record what they ran and answer as SQL Server would for these units of work:
     * the tenant's numbers drawn up to 43, new streams at the counts appended, sequence numbers from 100.
     */
    private static Connection connection(List<Run> runs) {
        Map<String, Function<Map<Integer, Object>, List<Object[]>>> answers = new LinkedHashMap<>();
        answers.put(SQL.nextTenantSequence(), p -> List.<Object[]>of(new Object[] {43L}));
        answers.put(SQL.upsertStreamsOfMany(), p -> rowsOf((String) p.get(4)).stream()
                .map(r -> new Object[] {r.getString("id"), r.getJsonNumber("n").longValue()}).toList());
        answers.put(SQL.ownAppendedSequencesOfMany(), p -> List.<Object[]>of(new Object[] {100L}));
        answers.put(SQL.selectAppendedSequencesOfMany(), p -> {
            List<Object[]> drawn = new ArrayList<>();
            long seq = 100;
            for (JsonObject range : rowsOf((String) p.get(1))) {
                for (long v = range.getJsonNumber("first_version").longValue();
                     v <= range.getJsonNumber("last_version").longValue(); v++) {
                    drawn.add(new Object[] {range.getString("stream_id"), v, seq++});
                }
            }
            return drawn;
        });
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "prepareStatement" -> statement((String) args[0], runs, answers);
                    case "getAutoCommit", "isClosed" -> false;
                    default -> null;
                });
    }

    private static List<JsonObject> rowsOf(String json) {
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            return reader.readArray().getValuesAs(JsonObject.class);
        }
    }

    private static PreparedStatement statement(String sql, List<Run> runs,
                                               Map<String, Function<Map<Integer, Object>, List<Object[]>>> answers) {
        Map<Integer, Object> parameters = new TreeMap<>();
        ResultSet[] last = new ResultSet[1];
        return (PreparedStatement) Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
                    String name = method.getName();
                    if (name.startsWith("set") && args != null && args.length >= 2 && args[0] instanceof Integer i) {
                        parameters.put(i, name.equals("setNull") ? null : args[1]);
                        return null;
                    }
                    return switch (name) {
                        case "executeQuery", "execute" -> {
                            runs.add(new Run(sql, new TreeMap<>(parameters)));
                            last[0] = resultSet(answers.getOrDefault(sql, p -> List.of()).apply(parameters));
                            yield name.equals("execute") ? (Object) true : last[0];
                        }
                        case "executeUpdate" -> {
                            runs.add(new Run(sql, new TreeMap<>(parameters)));
                            yield 1;
                        }
                        case "getResultSet" -> last[0];
                        case "getUpdateCount" -> -1;
                        case "getMoreResults" -> false;
                        default -> null;
                    };
                });
    }

    private static ResultSet resultSet(List<Object[]> rows) {
        int[] at = {-1};
        return (ResultSet) Proxy.newProxyInstance(ResultSet.class.getClassLoader(), new Class<?>[] {ResultSet.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "next" -> ++at[0] < rows.size();
                    case "getString" -> (String) rows.get(at[0])[(Integer) args[0] - 1];
                    case "getLong" -> ((Number) rows.get(at[0])[(Integer) args[0] - 1]).longValue();
                    case "wasNull" -> false;
                    default -> null;
                });
    }
}
