package dev.ferret.runtime.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DatabaseEngine;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.documents.ShadowTable;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every statement each dialect issues, compared with the reviewed text in {@code src/test/resources/golden}. For
 * SQL Server, which cannot run here, this is the test of record. A deliberate change of SQL is made by running
 * with {@code -Dferret.golden.update=true} and reviewing the diff of the golden file.
 */
class DialectGoldenTest {

    private static final Path GOLDEN = Path.of("src", "test", "resources", "golden");

    @ParameterizedTest
    @EnumSource(DatabaseEngine.class)
    void everyStatementMatchesItsGoldenText(DatabaseEngine engine) throws IOException {
        String rendered = render(Dialects.of(engine));
        Path file = GOLDEN.resolve(engine.name().toLowerCase(Locale.ROOT) + ".sql");
        if (Boolean.getBoolean("ferret.golden.update")) {
            Files.createDirectories(GOLDEN);
            Files.writeString(file, rendered, StandardCharsets.UTF_8);
        }
        assertThat(file).as("golden file; create it with -Dferret.golden.update=true").exists();
        assertThat(rendered).isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** All statements as {@code -- name} headed blocks, in a stable order. */
    static String render(Dialect dialect) {
        TableNames names = new TableNames(dialect.defaultSchema(), "pc_");
        Map<String, String> statements = new LinkedHashMap<>();
        SchemaSql schema = dialect.schemaSql(names);
        statements.put("schema.createSchema", schema.createSchema());
        statements.put("schema.migrationLock", schema.migrationLock());
        statements.put("schema.migrationUnlock", schema.migrationUnlock());
        for (SchemaObject object : schema.objects()) {
            addDdl(statements, "schema." + object.name(), object.ddl());
        }
        SchemaObject documentTable = dialect.documentTable(names, "order_summary");
        addDdl(statements, "schema." + documentTable.name(), documentTable.ddl());
        ShadowTable shadow = ShadowTable.of("order_summary", dialect, names);
        addDdl(statements, "schema." + shadow.table().name(), shadow.table().ddl());
        addRecord(statements, "events.", dialect.eventSql(names));
        addRecord(statements, "archive.", dialect.archiveSql(names));
        addRecord(statements, "documents.", dialect.documentSql(names, "order_summary"));
        addRecord(statements, "daemon.", dialect.daemonSql(names));
        addRecord(statements, "outbox.", dialect.outboxSql(names));
        addRecord(statements, "deadLetters.", dialect.deadLetterSql(names));
        dialect.replicaSql().ifPresent(replica -> addRecord(statements, "replica.", replica));
        statements.put("documents.shadow.copyAll", shadow.copyAll());
        statements.put("documents.shadow.copyTenant", shadow.copyTenant());
        statements.put("daemon.asyncCommit", dialect.asyncCommit());
        statements.put("documents.jsonText(customer.address.city)",
                dialect.jsonText(names, List.of("customer", "address", "city")));
        statements.put("documents.jsonNumber(total)", dialect.jsonNumber(names, List.of("total")));
        statements.put("documents.jsonTimestamp(placedAt)", dialect.jsonTimestamp(names, List.of("placedAt")));
        GoldenQueries.render(dialect, names, statements);
        statements.put("startup.serverReport", dialect.serverReportSql(names));

        StringBuilder out = new StringBuilder();
        statements.values().removeIf(String::isEmpty);
        statements.forEach((name, sql) -> out.append("-- ").append(name).append('\n').append(sql).append("\n\n"));
        return out.toString();
    }

    private static void addDdl(Map<String, String> statements, String name, List<String> ddl) {
        for (int i = 0; i < ddl.size(); i++) {
            statements.put(name + (ddl.size() > 1 ? "[" + i + "]" : ""), ddl.get(i));
        }
    }

    private static void addRecord(Map<String, String> statements, String prefix, Record sql) {
        for (RecordComponent component : sql.getClass().getRecordComponents()) {
            try {
                statements.put(prefix + component.getName(), (String) component.getAccessor().invoke(sql));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
