package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import org.junit.jupiter.api.Test;

/**
 * Every golden SQL Server statement goes through a SQL parser, JSqlParser: a typo in a statement that no server here
 * can run fails the build. JSqlParser reads a wide SQL grammar, not T-SQL whole: the statements it cannot read are
 * listed with the construct it lacks, and a statement may leave the list only by parsing.
 */
class SqlServerGrammarTest {

    private static final Path GOLDEN = Path.of("src", "test", "resources", "golden", "sql_server.sql");

    /** Statements built on T-SQL that JSqlParser 5.3 does not read, by golden name, with the construct. */
    private static final Map<String, String> BEYOND_THE_PARSER = Map.ofEntries(
            Map.entry("schema.createSchema", "EXEC(N'...') dynamic SQL"),
            Map.entry("schema.migrationLock", "the JDBC call escape {? = call ...}"),
            Map.entry("schema.migrationUnlock", "the JDBC call escape {? = call ...}"),
            Map.entry("schema.pc_events[1]", "IF NOT EXISTS (...) CREATE INDEX"),
            Map.entry("schema.pc_events[2]", "IF NOT EXISTS (...) CREATE INDEX"),
            Map.entry("schema.pc_events.correlation_id[1]", "IF NOT EXISTS (...) CREATE INDEX"),
            Map.entry("schema.pc_streams", "CONSTRAINT ... PRIMARY KEY CLUSTERED (columns)"),
            Map.entry("schema.pc_doc_order_summary", "CONSTRAINT ... PRIMARY KEY CLUSTERED (columns)"),
            Map.entry("schema.pc_doc_order_summary_rebuild", "CONSTRAINT ... PRIMARY KEY CLUSTERED (columns)"),
            Map.entry("events.upsertStream", "MERGE ... WITH (HOLDLOCK) ... OUTPUT"),
            Map.entry("events.upsertStreamsOfMany", "MERGE ... WITH (HOLDLOCK) ... OUTPUT"),
            Map.entry("events.nextTenantSequence", "MERGE ... WITH (HOLDLOCK) ... OUTPUT"),
            Map.entry("events.ownAppendedSequences", "DECLARE @table TABLE and sp_getapplock batches"),
            Map.entry("archive.copyToLive", "SET IDENTITY_INSERT and BEGIN TRY ... END CATCH with THROW"),
            Map.entry("events.ownAppendedSequencesOfMany", "DECLARE @table TABLE and sp_getapplock batches"),
            Map.entry("documents.upsert", "MERGE ... WITH (HOLDLOCK)"),
            Map.entry("daemon.highWaterMark", "table hints WITH (READCOMMITTEDLOCK, READPAST)"),
            Map.entry("daemon.listGaps", "table hints WITH (READCOMMITTEDLOCK, READPAST)"),
            Map.entry("daemon.tenantMarks", "table hints WITH (READCOMMITTEDLOCK, READPAST)"),
            Map.entry("daemon.advanceProgression", "MERGE ... WITH (HOLDLOCK)"),
            Map.entry("daemon.raiseMark", "MERGE ... WITH (HOLDLOCK)"),
            Map.entry("daemon.countSequences", "table hints WITH (READCOMMITTEDLOCK, READPAST)"),
            Map.entry("daemon.claimSequences", "a WHILE loop over sp_getapplock"),
            Map.entry("index.uniqueCompositeNested.ddl[1]", "IF COL_LENGTH(...) IS NULL ALTER TABLE ... ADD ... AS"),
            Map.entry("index.uniqueCompositeNested.ddl[2]", "IF COL_LENGTH(...) IS NULL ALTER TABLE ... ADD ... AS"));

    private static Map<String, String> golden() throws IOException {
        Map<String, String> statements = new LinkedHashMap<>();
        String[] parts = Files.readString(GOLDEN, StandardCharsets.UTF_8).split("(?m)^-- ");
        for (String part : parts) {
            if (part.isBlank()) {
                continue;
            }
            int end = part.indexOf('\n');
            statements.put(part.substring(0, end).trim(), part.substring(end + 1).trim());
        }
        return statements;
    }

    @Test
    void everyGoldenStatementTheParserReadsParses() throws IOException {
        Map<String, String> statements = golden();
        assertThat(statements.keySet()).as("golden names of the statements listed as beyond the parser")
                .containsAll(BEYOND_THE_PARSER.keySet());
        int parsed = 0;
        for (Map.Entry<String, String> statement : statements.entrySet()) {
            String name = statement.getKey();
            if (BEYOND_THE_PARSER.containsKey(name)) {
                continue;
            }
            // an expression (a path read, an index's query expressions) is parsed as what a query selects; OPENJSON's
            // WITH clause, which the parser lacks, is checked on its own below and taken out here
            String sql = name.startsWith("documents.json") || name.endsWith("queryExpressions")
                    ? "SELECT " + statement.getValue() + " FROM t" : withoutOpenJsonSchemas(statement.getValue());
            // the parser backtracks; a statement it cannot settle in seconds is a finding, not a hang. T-SQL quotes
            // identifiers in square brackets ([key], OPENJSON's column), which the parser reads when told
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThatCode(
                    () -> CCJSqlParserUtil.parseStatements(sql, parser -> parser.withSquareBracketQuotation(true)))
                    .as(name).doesNotThrowAnyException());
            parsed++;
        }
        assertThat(parsed).isGreaterThanOrEqualTo(60);
    }

    @Test
    void everyOpenJsonWithClauseDeclaresColumnsAsTheDocumentedGrammarHasThem() throws IOException {
        // OPENJSON (Transact-SQL): WITH ( { colName type [ column_path ] [ AS JSON ] } [ ,...n ] ); Ferret's rows
        // are read by the columns' own names (the default path, '$.colName'), scalars only, so never AS JSON
        Pattern column = Pattern.compile("[a-z_]+ (NVARCHAR\\((\\d+|MAX)\\)|BIGINT)");
        int clauses = 0;
        for (Map.Entry<String, String> statement : golden().entrySet()) {
            String sql = statement.getValue();
            for (int at = sql.indexOf(OPENJSON_WITH); at >= 0; at = sql.indexOf(OPENJSON_WITH, at + 1)) {
                String schema = sql.substring(at + OPENJSON_WITH.length(), closing(sql, at + OPENJSON_WITH.length() - 1));
                for (String definition : schema.split(", ")) {
                    assertThat(definition).as(statement.getKey()).matches(column);
                }
                clauses++;
            }
        }
        // upsertStreamsOfMany, insertEventsOfMany, selectAppendedSequencesOfMany, ownAppendedSequencesOfMany
        assertThat(clauses).isEqualTo(4);
    }

    private static final String OPENJSON_WITH = ") WITH (";

    /** {@code sql} with every {@code OPENJSON(...) WITH (...)} schema taken out, leaving {@code OPENJSON(...)}. */
    static String withoutOpenJsonSchemas(String sql) {
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int at = sql.indexOf(OPENJSON_WITH); at >= 0; at = sql.indexOf(OPENJSON_WITH, from)) {
            out.append(sql, from, at + 1);
            from = closing(sql, at + OPENJSON_WITH.length() - 1) + 1;
        }
        return out.append(sql.substring(from)).toString();
    }

    /** The index of the parenthesis that closes the one at {@code open}. */
    private static int closing(String sql, int open) {
        int depth = 0;
        for (int i = open; i < sql.length(); i++) {
            depth += sql.charAt(i) == '(' ? 1 : sql.charAt(i) == ')' ? -1 : 0;
            if (depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("unbalanced parentheses after " + open + ": " + sql);
    }
}
