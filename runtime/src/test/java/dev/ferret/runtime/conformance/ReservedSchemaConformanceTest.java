package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.TestDatabase;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Ferret splices the schema name unquoted into its statements, so a schema that is a reserved word of the engine
 * is refused when the store starts, naming the schema and the engine, before anything is created.
 */
@Tag("conformance")
class ReservedSchemaConformanceTest {

    @Test
    void aSchemaNamedByAWordTheEngineReservesIsRefusedAtStartAndNothingIsCreated() {
        try (TestDatabase db = TestDatabase.create("reserved")) {
            for (String schema : new String[] {"order", "TABLE", "user"}) {
                assertThatThrownBy(() -> Ferret.createStore(db.options().schema(schema)).close())
                        .isInstanceOf(ConfigurationException.class)
                        .hasMessageContaining("schema '" + schema + "'")
                        .hasMessageContaining(db.engine().name());
            }
            String catalog = db.engine() == DatabaseEngine.H2 ? "ORDER" : "order";
            assertThat(db.queryLong("SELECT COUNT(*) FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME = '"
                    + catalog + "'")).isZero();
        }
    }

    @Test
    void everyEngineReservesTheWordsThatWouldBreakItsStatements() {
        for (DatabaseEngine engine : DatabaseEngine.values()) {
            assertThat(Dialects.of(engine).reservedWords()).as(engine.name()).contains("ORDER", "TABLE", "SELECT");
        }
        // PUBLIC is reserved in T-SQL, yet it is PostgreSQL's default schema
        assertThat(Dialects.of(DatabaseEngine.SQL_SERVER).reservedWords()).contains("PUBLIC", "USER", "KEY");
        assertThat(Dialects.of(DatabaseEngine.POSTGRESQL).reservedWords()).doesNotContain("PUBLIC");
        for (DatabaseEngine engine : DatabaseEngine.values()) {
            String fallback = Dialects.of(engine).defaultSchema().toUpperCase(Locale.ROOT);
            assertThat(Dialects.of(engine).reservedWords()).as(engine.name()).doesNotContain(fallback);
        }
    }
}
