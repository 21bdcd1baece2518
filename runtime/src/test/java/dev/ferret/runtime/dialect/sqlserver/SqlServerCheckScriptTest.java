package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.dialect.ArrayColumn;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.ValueKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/sqlserver-check.sql}, the script a DBA runs in sqlcmd or SSMS against an empty database: it is made
 * here from the dialect's own statements (the schema of a store with a number, a point-in-time and a unique text
 * index, the document upsert, the event insert, the owner-lock batches, the high water mark), so it never drifts
 * from what Ferret sends. A change of SQL rewrites it with {@code -Dferret.golden.update=true}.
 */
class SqlServerCheckScriptTest {

    private static final Path SCRIPT = Path.of("..", "docs", "sqlserver-check.sql");
    private static final String SCHEMA = "ferret_check";

    public record Reading(String id, String owner, double amount, Instant at, OffsetDateTime local) {
    }

    @Test
    void theCommittedCheckScriptIsTheOneTheDialectMakes() throws IOException {
        String script = script();
        if (Boolean.getBoolean("ferret.golden.update")) {
            Files.writeString(SCRIPT, script, StandardCharsets.UTF_8);
        }
        assertThat(Files.readString(SCRIPT, StandardCharsets.UTF_8))
                .as("docs/sqlserver-check.sql; rewrite it with -Dferret.golden.update=true").isEqualTo(script);
    }

    @Test
    void everyCheckPrintsOkOrFailAndTheScriptCleansUpBeforeAndAfter() throws IOException {
        String script = script();
        long checks = script.lines().filter(line -> line.startsWith("-- check ")).count();
        assertThat(checks).isGreaterThanOrEqualTo(20);
        assertThat(script.split("PRINT N'OK ", -1)).hasSize((int) checks + 1);
        assertThat(script.indexOf("DROP SCHEMA " + SCHEMA)).isLessThan(script.indexOf("-- check "));
        assertThat(script.lastIndexOf("DROP SCHEMA " + SCHEMA)).isGreaterThan(script.lastIndexOf("-- check "));
        // every check's body is compiled late, inside EXEC, so a refused statement is a FAIL line, not a stop
        assertThat(script.split(Pattern.quote("\n  EXEC(N'"), -1)).hasSize((int) checks + 1);
    }

    private static String script() {
        SqlServerDialect dialect = new SqlServerDialect();
        TableNames names = new TableNames(SCHEMA, "pc_");
        StoreOptions options = new StoreOptions().schema(SCHEMA);
        options.documents().register(Reading.class).index(Reading.class, "amount").index(Reading.class, "at")
                .uniqueIndex(Reading.class, "owner");
        List<String> schema = Ferret.schemaStatements(options, DatabaseEngine.SQL_SERVER);
        String documents = names.document("reading");
        String upsert = dialect.documentSql(names, "reading").upsert();
        EventSql events = dialect.eventSql(names);
        DaemonSql daemon = dialect.daemonSql(names);
        String prefix = SqlServerDialect.sequenceOwnerPrefix(names);

        Script out = new Script();
        out.line("-- Ferret: SQL Server check. Made by SqlServerCheckScriptTest from the dialect's own statements;");
        out.line("-- do not edit. Run against an empty database with the login the application uses (it needs CREATE");
        out.line("-- SCHEMA and CREATE TABLE here), in sqlcmd or SSMS:");
        out.line("--   sqlcmd -S host -d ferret -U user -P ... -i docs/sqlserver-check.sql");
        out.line("-- Each check prints one line, OK or FAIL with the server's message. It works in schema " + SCHEMA
                + ",");
        out.line("-- which it drops before and after. A few minutes at most; nothing outside that schema is touched.");
        out.line("SET NOCOUNT ON;");
        out.batch();
        out.cleanUp();

        int i = 1;
        for (String statement : schema) {
            out.check("schema " + i + "/" + schema.size() + ": " + firstLine(statement), statement, null);
            i++;
        }

        String[][] readings = {
                {"big", "a", "1.25E7", "2026-03-01T10:00:00.123456789Z", "2026-03-01T12:00:00.123456789+02:00"},
                {"bigger", "b", "3.5E8", "2026-03-01T10:00:00.12345679Z", "2026-03-01T12:00:00.12345679+02:00"},
                {"tiny", "c", "9.5E-4", "2026-03-01T09:59:59Z", "2026-03-01T11:59:59+02:00"},
                {"small", null, "12.5", "2026-03-01T10:00:00.1Z", "2026-03-01T12:00:00.1+02:00"},
                {"half", null, "0.5", "2026-03-01T10:00:01Z", "2026-03-01T12:00:01+02:00"}};
        for (String[] r : readings) {
            String json = "{\"amount\":" + r[2] + ",\"at\":\"" + r[3] + "\",\"id\":\"" + r[0] + "\",\"local\":\""
                    + r[4] + "\"" + (r[1] == null ? "" : ",\"owner\":\"" + r[1] + "\"") + "}";
            out.check("document '" + r[0] + "' (amount " + r[2] + ", at " + r[3] + ")" + (r[1] == null
                            ? ", no owner: the unique index's guard keeps it apart" : ""),
                    executeSql(upsert, "@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset",
                            "N'" + r[0] + "', N'*DEFAULT*', " + nString(json) + ", SYSDATETIMEOFFSET()"), null);
        }
        String amount = "q_amount";
        String at = "q_at";
        String local = dialect.jsonValue(names, List.of("local"), ValueKind.TIMESTAMP);
        String plainAmount = dialect.jsonValue(names, List.of("amount"), ValueKind.NUMBER);
        out.check("exponent-form numbers are indexed by value (1.25E7 and 3.5E8 above 1,000,000)",
                count(documents, amount + " > 1000000"), 2);
        out.check("exponent-form numbers compare by value where no index is (the query's own expression)",
                count(documents, plainAmount + " > 1000000"), 2);
        out.check("a small exponent-form number (9.5E-4) is below 0.001", count(documents, amount + " < 0.001"), 1);
        out.check("numbers sort by value", "IF (SELECT STRING_AGG(id, N',') WITHIN GROUP (ORDER BY " + amount
                + ") FROM " + documents + ") <> N'tiny,half,small,big,bigger' THROW 51000, N'wrong order', 1;", null);
        String after = "CAST(N'2026-03-01T10:00:00.05+00:00' AS DATETIMEOFFSET(7))";
        out.check("points in time with nine fractional digits are indexed, not NULL",
                count(documents, at + " IS NULL"), 0);
        out.check("points in time compare by instant (Z, nine fractional digits)",
                count(documents, at + " > " + after + " AND " + at + " < CAST(N'2026-03-01T10:00:00.9Z' AS"
                        + " DATETIMEOFFSET(7))"), 3);
        out.check("points in time with a +02:00 offset compare by instant where no index is",
                count(documents, local + " > " + after + " AND " + local + " < CAST(N'2026-03-01T10:00:00.9Z' AS"
                        + " DATETIMEOFFSET(7))"), 3);
        out.check("the unique index refuses a second document of owner 'a'", "BEGIN TRY " + executeSql(upsert,
                "@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset",
                "N'twin', N'*DEFAULT*', N'{\"amount\":1,\"id\":\"twin\",\"owner\":\"a\"}', SYSDATETIMEOFFSET()")
                + " END TRY BEGIN CATCH IF ERROR_NUMBER() IN (2601, 2627) RETURN; THROW; END CATCH;"
                + " THROW 51000, N'a duplicate owner was stored', 1;", null);

        String insertEvent = executeSql(events.insertEvent(), "@p1 nvarchar(36), @p2 nvarchar(250), @p3 bigint,"
                        + " @p4 nvarchar(250), @p5 nvarchar(max), @p6 datetimeoffset, @p7 nvarchar(100), @p8 bigint,"
                        + " @p9 nvarchar(250), @p10 nvarchar(250), @p11 nvarchar(max)",
                "N'6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a11', N's-1', 1, N'Noted', N'{\"id\":\"s-1\"}',"
                        + " SYSDATETIMEOFFSET(), N'*DEFAULT*', NULL, NULL, NULL, NULL");
        String own = executeSql(events.ownAppendedSequences(), "@p1 nvarchar(200), @p2 nvarchar(100),"
                + " @p3 nvarchar(250), @p4 bigint, @p5 bigint", "N'" + prefix + "', N'*DEFAULT*', N's-1', 1, 1");
        out.check("an append inserts its event and takes its owner lock in its transaction (one batch)",
                "DECLARE @lowest TABLE (seq bigint); BEGIN TRANSACTION; " + insertEvent + " INSERT INTO @lowest "
                        + own + " IF (SELECT seq FROM @lowest) <> (SELECT MAX(seq_id) FROM " + names.events()
                        + ") THROW 51000, N'the owner lock batch returned another sequence', 1; COMMIT;", null);
        String claim = executeSql(daemon.claimSequences(), "@p1 bigint, @p2 bigint, @p3 nvarchar(200)",
                "1, 1, N'" + prefix + "'");
        out.check("the detector claims a committed append's owner lock (0: none held)",
                "DECLARE @held TABLE (held int); BEGIN TRANSACTION; INSERT INTO @held " + claim
                        + " IF (SELECT held FROM @held) <> 0 THROW 51000, N'a committed append still holds its"
                        + " lock', 1; COMMIT;", null);
        String mark = executeSql(daemon.highWaterMark(), "@p1 bigint, @p2 bigint", "0, 0");
        out.check("the high water mark reads the log with locking reads (READCOMMITTEDLOCK, READPAST)",
                "DECLARE @mark TABLE (gap_at bigint, after_gap bigint, highest bigint); INSERT INTO @mark " + mark
                        + " IF (SELECT highest FROM @mark) <> 1 OR (SELECT gap_at FROM @mark) IS NOT NULL THROW 51000,"
                        + " N'the mark is not 1 without a gap', 1;", null);
        batchedAppend(out, names, events, prefix);
        out.cleanUp();
        return out.toString();
    }

    /**
     * A unit of work of two streams through the statements that batch it, its rows in the JSON parameters the driver
     * would send ({@link JsonRows}): stream heads in one MERGE, events in one INSERT numbered in the rows' order,
     * the owner locks and the read-back of every append in one statement each, values stored exactly. The MERGE
     * returns its heads to the client, as it does to the driver: the one check that prints rows.
     */
    private static void batchedAppend(Script out, TableNames names, EventSql events, String prefix) {
        String eventA1 = "{\"text\":\"say \\\"hi\\\" -- 'quoted'\",\"path\":\"C:\\\\temp\"}";
        String eventA2 = "{\"at\":\"2026-03-01T12:00:00.123456789+02:00\",\"u\":\"\\u00fc\"}";
        String headers = "{\"h\":\"v \\\"1\\\"\"}";
        String streams = JsonRows.of(List.of(new ArrayColumn("id", "varchar", List.of("batch-a", "batch-b")),
                new ArrayColumn("type", "varchar", Arrays.asList("Order", null)),
                new ArrayColumn("n", "bigint", List.of(2L, 1L))));
        String rows = JsonRows.of(List.of(
                new ArrayColumn("id", "varchar", List.of("6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a12",
                        "6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a13", "6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a14")),
                new ArrayColumn("stream_id", "varchar", List.of("batch-a", "batch-a", "batch-b")),
                new ArrayColumn("version", "bigint", List.of(1L, 2L, 1L)),
                new ArrayColumn("type", "varchar", List.of("Noted", "Noted", "Noted")),
                new ArrayColumn("data", "text", List.of(eventA1, eventA2, "[]")),
                new ArrayColumn("tenant_seq", "bigint", Arrays.asList(null, null, null)),
                new ArrayColumn("correlation_id", "varchar", Arrays.asList("corr-1", "corr-1", null)),
                new ArrayColumn("causation_id", "varchar", Arrays.asList(null, null, null)),
                new ArrayColumn("headers", "text", Arrays.asList(headers, headers, null))));
        String ranges = JsonRows.of(List.of(new ArrayColumn("stream_id", "varchar", List.of("batch-a", "batch-b")),
                new ArrayColumn("first_version", "bigint", List.of(1L, 1L)),
                new ArrayColumn("last_version", "bigint", List.of(2L, 1L))));
        String upsert = executeSql(events.upsertStreamsOfMany(), "@p1 nvarchar(100), @p2 datetimeoffset,"
                + " @p3 datetimeoffset, @p4 nvarchar(max)", "N'*DEFAULT*', @now, @now, " + nString(streams));
        String insert = executeSql(events.insertEventsOfMany(), "@p1 datetimeoffset, @p2 nvarchar(100),"
                + " @p3 nvarchar(max)", "@now, N'*DEFAULT*', " + nString(rows));
        String own = executeSql(events.ownAppendedSequencesOfMany(), "@p1 nvarchar(200), @p2 nvarchar(max),"
                + " @p3 nvarchar(100)", "N'" + prefix + "', " + nString(ranges) + ", N'*DEFAULT*'");
        String read = executeSql(events.selectAppendedSequencesOfMany(), "@p1 nvarchar(max), @p2 nvarchar(100)",
                nString(ranges) + ", N'*DEFAULT*'");
        String batch = "e.stream_id IN (N'batch-a', N'batch-b')";
        out.check("a unit of work of two streams is one statement per step: heads, events in order, owner locks,"
                        + " read-back; every value stored exactly",
                "DECLARE @now datetimeoffset = SYSDATETIMEOFFSET(); DECLARE @lowest TABLE (seq bigint);"
                        + " DECLARE @drawn TABLE (stream_id nvarchar(250), version bigint, seq bigint);"
                        + " BEGIN TRANSACTION; " + upsert + " " + insert + " INSERT INTO @lowest " + own
                        + " INSERT INTO @drawn " + read
                        + " IF (SELECT STRING_AGG(CONCAT(e.stream_id, N'@', e.version), N',') WITHIN GROUP (ORDER BY"
                        + " e.seq_id) FROM " + names.events() + " e WHERE " + batch + ") <> N'batch-a@1,batch-a@2,"
                        + "batch-b@1' THROW 51000, N'the events are not numbered in the rows'' order', 1;"
                        + " IF (SELECT seq FROM @lowest) <> (SELECT MIN(e.seq_id) FROM " + names.events() + " e WHERE "
                        + batch + ") THROW 51000, N'the owner lock batch returned another sequence', 1;"
                        + " IF (SELECT COUNT(*) FROM @drawn d JOIN " + names.events() + " e ON e.seq_id = d.seq"
                        + " AND e.stream_id = d.stream_id AND e.version = d.version) <> 3 THROW 51000,"
                        + " N'the read-back missed an event', 1;"
                        + " IF (SELECT STRING_AGG(CONCAT(s.id, N'@', s.version, N':', s.type), N',') WITHIN GROUP"
                        + " (ORDER BY s.id) FROM " + names.streams() + " s WHERE s.id IN (N'batch-a', N'batch-b'))"
                        + " <> N'batch-a@2:Order,batch-b@1:' THROW 51000, N'the stream heads are wrong', 1;"
                        + " IF (SELECT COUNT(*) FROM " + names.events() + " e WHERE e.stream_id = N'batch-a'"
                        + " AND e.data IN (" + nString(eventA1) + ", " + nString(eventA2) + ") AND e.headers = "
                        + nString(headers) + " AND e.correlation_id = N'corr-1' AND e.causation_id IS NULL"
                        + " AND e.tenant_seq IS NULL AND e.timestamp = @now) <> 2 OR (SELECT COUNT(*) FROM "
                        + names.events() + " e WHERE e.stream_id = N'batch-b' AND e.data = N'[]' AND e.headers IS NULL"
                        + " AND e.id = '6F1C1E64-0F43-4A49-9F0E-0D7F6D3C2A14') <> 1"
                        + " THROW 51000, N'a value changed on its way', 1; COMMIT;", null);
    }

    /** {@code sql} with its JDBC markers as sp_executesql's @p1, @p2, ... and these values. */
    private static String executeSql(String sql, String declarations, String values) {
        StringBuilder named = new StringBuilder();
        boolean quoted = false;
        int parameter = 0;
        for (char c : sql.toCharArray()) {
            if (c == '\'') {
                quoted = !quoted;
            }
            if (c == '?' && !quoted) {
                named.append("@p").append(++parameter);
            } else {
                named.append(c);
            }
        }
        assertThat(declarations.split(",")).as(sql).hasSize(parameter);
        return "EXEC sp_executesql " + nString(named.toString()) + ", N'" + declarations + "', " + values + ";";
    }

    private static String count(String table, String where) {
        return "SELECT COUNT(*) FROM " + table + " WHERE " + where;
    }

    private static String nString(String text) {
        return "N'" + text.replace("'", "''") + "'";
    }

    private static String firstLine(String statement) {
        String line = statement.strip().lines().reduce((a, b) -> a.startsWith("IF ") ? b : a).orElse("");
        return line.length() > 90 ? line.substring(0, 90) + "..." : line;
    }

    /** The script as it is written: batches apart, each check in TRY/CATCH, its body compiled late through EXEC. */
    private static final class Script {

        private final StringBuilder text = new StringBuilder();
        private int checks;

        void line(String line) {
            text.append(line).append('\n');
        }

        void batch() {
            text.append("GO\n\n");
        }

        /**
         * One check: {@code body} runs in EXEC(...), so a statement the server refuses to compile is a FAIL line too;
         * with {@code expected}, the body is a count that must equal it.
         */
        void check(String name, String body, Integer expected) {
            checks++;
            String run = expected == null ? body : "IF (" + body + ") <> " + expected
                    + " THROW 51000, N'expected " + expected + "', 1;";
            String label = "check " + checks + ": " + name.replace("'", "''");
            line("-- " + label.replace("''", "'"));
            line("BEGIN TRY");
            line("  EXEC(" + nString(run) + ");");
            line("  PRINT N'OK   " + label + "';");
            line("END TRY");
            line("BEGIN CATCH");
            line("  IF @@TRANCOUNT > 0 ROLLBACK;");
            line("  PRINT N'FAIL " + label + ": ' + ERROR_MESSAGE();");
            line("END CATCH;");
            batch();
        }

        /** Drops everything in the check's schema, then the schema. */
        void cleanUp() {
            line("DECLARE @drop nvarchar(max) = N'';");
            line("SELECT @drop += N'DROP TABLE " + SCHEMA + ".' + QUOTENAME(name) + N'; ' FROM sys.tables"
                    + " WHERE schema_id = SCHEMA_ID(N'" + SCHEMA + "');");
            line("EXEC(@drop);");
            line("IF SCHEMA_ID(N'" + SCHEMA + "') IS NOT NULL EXEC(N'DROP SCHEMA " + SCHEMA + "');");
            batch();
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
