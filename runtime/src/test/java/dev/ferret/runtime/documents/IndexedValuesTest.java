package dev.ferret.runtime.documents;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.IndexKeyLimit;
import dev.ferret.runtime.dialect.ValueKind;
import dev.ferret.runtime.dialect.postgresql.PostgresDialect;
import dev.ferret.runtime.dialect.sqlserver.SqlServerDialect;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Index key limits as each engine counts them; runs without a database. */
class IndexedValuesTest {

    private static final IndexKeyLimit SQL_SERVER = new SqlServerDialect().indexKeyLimit();
    private static final IndexKeyLimit POSTGRES = new PostgresDialect().indexKeyLimit();

    private static IndexedValues index(IndexKeyLimit limit, boolean unique, ValueKind kind) {
        return new IndexedValues("ix_pc_doc_note_title", List.of(new DocumentIndexSql.Key(List.of("title"), kind,
                "q_title")), List.of("title"), unique, limit);
    }

    private static String note(String title) {
        return "{\"id\":\"n-1\",\"title\":\"" + title + "\"}";
    }

    @Test
    void sqlServerCountsTwoBytesAUtf16UnitAgainstSeventeenHundredTenantAndIdIncluded() {
        IndexedValues text = index(SQL_SERVER, false, ValueKind.TEXT);
        // 2 x (1 + 3 + 846) = 1,700 bytes
        assertThatCode(() -> text.check("note", "t", "n-1", note("x".repeat(846)))).doesNotThrowAnyException();
        assertThatThrownBy(() -> text.check("note", "t", "n-1", note("x".repeat(847))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index ix_pc_doc_note_title cannot hold it")
                .hasMessageContaining("at most 1700").hasMessageContaining("SQL Server")
                .hasMessageContaining("1702 bytes");
        // a unique index ends its key with a guard that is NULL while every key is present: the id is not counted
        assertThatCode(() -> index(SQL_SERVER, true, ValueKind.TEXT).check("note", "t", "n-1",
                note("x".repeat(847)))).doesNotThrowAnyException();
    }

    @Test
    void postgresCountsUtf8BytesSoMultiByteTextReachesTheLimitSooner() {
        IndexedValues text = index(POSTGRES, true, ValueKind.TEXT);
        assertThatCode(() -> text.check("note", "t", "n-1", note("x".repeat(2_000)))).doesNotThrowAnyException();
        // 1 (tenant) + 2 x 1,320 = 2,641 bytes
        assertThatThrownBy(() -> text.check("note", "t", "n-1", note("\u00e9".repeat(1_320))))
                .hasMessageContaining("at most 2640").hasMessageContaining("2641 bytes");
    }

    @Test
    void sqlServerRefusesANumberPastDecimalThirtyEightTenWithoutPrintingIt() {
        IndexedValues number = index(SQL_SERVER, false, ValueKind.NUMBER);
        assertThatCode(() -> number.check("note", "t", "n-1", "{\"title\":1.0E27}")).doesNotThrowAnyException();
        assertThatCode(() -> number.check("note", "t", "n-1", "{\"title\":null}")).doesNotThrowAnyException();
        assertThatThrownBy(() -> number.check("note", "t", "n-1", "{\"title\":-1.5E28}"))
                .hasMessageContaining("29 integer digits").hasMessageContaining("below 10^28")
                .hasMessageNotContaining("1.5E28");
        // PostgreSQL's numeric indexes any JSON number
        assertThatCode(() -> index(POSTGRES, false, ValueKind.NUMBER).check("note", "t", "n-1",
                "{\"title\":1.0E300}")).doesNotThrowAnyException();
    }
}
