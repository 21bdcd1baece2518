package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.ValueKind;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SqlServerDialectTest {

    private final SqlServerDialect dialect = new SqlServerDialect();

    @Test
    void aUniqueDocumentIndexKeepsDocumentsWithoutAPropertyApartWithAGuardColumnNotAFilter() {
        TableNames names = new TableNames("dbo", "pc_");
        var sql = dialect.documentIndex(names, "account", "ux_pc_doc_account_email_region",
                List.of(new DocumentIndexSql.Key(List.of("email"), ValueKind.TEXT, "q_email"),
                        new DocumentIndexSql.Key(List.of("region"), ValueKind.TEXT, "q_region")), true);
        String ddl = sql.ddl().get(sql.ddl().size() - 1);
        String create = ddl.substring(ddl.indexOf("CREATE UNIQUE INDEX"));
        // a filtered index may not name a computed column in its filter (CREATE INDEX, "filtered indexes")
        assertThat(create).doesNotContain(" WHERE ").endsWith(
                "(tenant_id, q_email, q_region, g_ux_pc_doc_account_email_region)");
        String guard = sql.ddl().get(2);
        // a computed column cannot read another computed column: the guard repeats the keys' expressions
        assertThat(guard).contains("ADD g_ux_pc_doc_account_email_region AS CASE WHEN JSON_VALUE(data, '$.\"email\"')"
                + " COLLATE Latin1_General_100_BIN2 IS NOT NULL AND JSON_VALUE(data, '$.\"region\"')"
                + " COLLATE Latin1_General_100_BIN2 IS NOT NULL THEN NULL ELSE id END PERSISTED")
                .doesNotContain("q_email IS");
        // a non-unique index is as before: the id ends the key, no guard
        var plain = dialect.documentIndex(names, "account", "ix_pc_doc_account_email",
                List.of(new DocumentIndexSql.Key(List.of("email"), ValueKind.TEXT, "q_email")), false);
        assertThat(plain.ddl()).hasSize(2);
        assertThat(plain.ddl().get(1)).endsWith("(tenant_id, q_email, id)");
    }

    @Test
    void textPathsCompareAndIndexInTheKeysBinaryCollationWhateverTheDatabaseDefault() {
        TableNames names = new TableNames("dbo", "pc_");
        assertThat(dialect.jsonValue(names, List.of("status"), ValueKind.TEXT))
                .isEqualTo("JSON_VALUE(data, '$.\"status\"') COLLATE Latin1_General_100_BIN2");
        // numbers and timestamps are converted, not compared as text
        assertThat(dialect.jsonValue(names, List.of("total"), ValueKind.NUMBER)).doesNotContain("COLLATE");
        var index = dialect.documentIndex(names, "account", "ux_pc_doc_account_email",
                List.of(new DocumentIndexSql.Key(List.of("email"), ValueKind.TEXT, "q_email")), true);
        assertThat(index.ddl().get(0)).contains("ADD q_email AS JSON_VALUE(data, '$.\"email\"')"
                + " COLLATE Latin1_General_100_BIN2 PERSISTED");
    }

    @Test
    void numbersInExponentFormAreReadThroughFloatSoDoublesJsonbWritesAsOneEsevenAreNotNull() {
        TableNames names = new TableNames("dbo", "pc_");
        String number = dialect.jsonValue(names, List.of("total"), ValueKind.NUMBER);
        // TRY_CAST of '1.0E7' to DECIMAL is NULL; FLOAT parses it, and its DECIMAL is the one the plain form gives
        assertThat(number).isEqualTo("COALESCE(TRY_CAST(JSON_VALUE(data, '$.\"total\"') AS DECIMAL(38, 10)),"
                + " TRY_CAST(TRY_CAST(JSON_VALUE(data, '$.\"total\"') AS FLOAT) AS DECIMAL(38, 10)))");
        var index = dialect.documentIndex(names, "account", "ix_pc_doc_account_total",
                List.of(new DocumentIndexSql.Key(List.of("total"), ValueKind.NUMBER, "q_total")), false);
        assertThat(index.ddl().get(0)).contains("ADD q_total AS " + number + " PERSISTED");
        // a number past DECIMAL(38, 10) is refused before it is indexed as NULL
        assertThat(dialect.indexKeyLimit().fits(new BigDecimal("9999999999999999999999999999.5"))).isTrue();
        assertThat(dialect.indexKeyLimit().fits(new BigDecimal("1E28"))).isFalse();
    }

    @Test
    void pointsInTimeAreReadWithTheDeterministicIsoStyleSoTheirIndexColumnCanBePersisted() {
        TableNames names = new TableNames("dbo", "pc_");
        String at = dialect.jsonValue(names, List.of("at"), ValueKind.TIMESTAMP);
        // a string to DATETIMEOFFSET conversion without a style depends on SET DATEFORMAT: error 4936 when persisted
        assertThat(at).startsWith("TRY_CONVERT(DATETIMEOFFSET(7), ").endsWith(", 127)")
                .doesNotContain("AS DATETIMEOFFSET");
        // the eighth and ninth fractional digits JSON-B writes are cut (DATETIMEOFFSET takes seven), only when present
        String text = "JSON_VALUE(data, '$.\"at\"') COLLATE Latin1_General_100_BIN2";
        assertThat(at).contains("CASE WHEN " + text + " LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF("
                + text + ", CHARINDEX(N'.', " + text + ") + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(" + text
                + ", CHARINDEX(N'.', " + text + ") + 1, 4000)) - 1 - 7, N'') ELSE " + text + " END");
        var index = dialect.documentIndex(names, "account", "ix_pc_doc_account_at",
                List.of(new DocumentIndexSql.Key(List.of("at"), ValueKind.TIMESTAMP, "q_at")), false);
        assertThat(index.ddl().get(0)).contains("ADD q_at AS " + at + " PERSISTED");
    }

    @Test
    void idListsBecomeJsonArraysForOpenJson() {
        assertThat(SqlServerDialect.jsonArrayOf(List.of("a", "b\"c", "d\\e", "f\ng")))
                .isEqualTo("[\"a\",\"b\\\"c\",\"d\\\\e\",\"f\\u000ag\"]");
        assertThat(SqlServerDialect.jsonArrayOf(List.of())).isEqualTo("[]");
    }

    @Test
    void propertiesAreAddressedByAQuotedLiteralJsonPath() {
        assertThat(dialect.jsonText(null, List.of("customer", "city"))).isEqualTo("JSON_VALUE(data, '$.\"customer\".\"city\"')");
    }

    @Test
    void duplicateKeyErrorsAreRecognisedByNumber() {
        assertThat(dialect.isUniqueViolation(new SQLException("pk", "23000", 2627))).isTrue();
        assertThat(dialect.isUniqueViolation(new SQLException("ix", "23000", 2601))).isTrue();
        assertThat(dialect.isUniqueViolation(new SQLException("deadlock", "40001", 1205))).isFalse();
    }

    @Test
    void sequenceOwnerLocksAreNamedPerStoreAndFitAnApplockResource() {
        TableNames names = new TableNames("Sales", "pc_");
        assertThat(SqlServerDialect.sequenceOwnerPrefix(names)).isEqualTo("ferret:seq:sales.pc_:");
        // the batch declares @prefix nvarchar(200); the number adds at most 20 characters to it, within 255
        assertThat(SqlServerDialect.sequenceOwnerPrefix(new TableNames("s".repeat(63), "p".repeat(20))))
                .hasSizeLessThanOrEqualTo(200);
    }

    @Test
    void shardLocksAreSessionApplocksProbedInOneRoundTrip() {
        assertThat(SqlServerShardLocks.TRY_LOCK).isEqualTo("{? = call sp_getapplock(?, 'Exclusive', 'Session', 0)}");
        assertThat(SqlServerShardLocks.RELEASE).isEqualTo("{? = call sp_releaseapplock(?, 'Session')}");
        assertThat(SqlServerShardLocks.PROBE).isEqualTo("SELECT value FROM OPENJSON(?)"
                + " WHERE APPLOCK_MODE('public', value, 'Session') <> 'NoLock'");
    }

    @Test
    void deadlocksTimeoutsAndDroppedConnectionsAreTransient() {
        assertThat(dialect.isTransient(new SQLException("deadlock victim", "40001", 1205))).isTrue();
        assertThat(dialect.isTransient(new SQLException("lock request time out", "S00051", 1222))).isTrue();
        assertThat(dialect.isTransient(new SQLException("connection reset", "08S01", 0))).isTrue();
        assertThat(dialect.isTransient(new SQLException("syntax", "42000", 102))).isFalse();
    }

    @Test
    void theMigrationLockIsASessionApplockTakenAndReleasedThroughCallSyntax() {
        assertThat(SqlServerDialect.MIGRATION_LOCK)
                .isEqualTo("{? = call sp_getapplock(?, 'Exclusive', 'Session', ?)}");
        assertThat(SqlServerDialect.MIGRATION_UNLOCK).isEqualTo("{? = call sp_releaseapplock(?, 'Session')}");
    }

    @Test
    void everyReadpastIsALockingReadSoItRunsUnderReadCommittedSnapshotToo() {
        DaemonSql sql = dialect.daemonSql(new TableNames("dbo", "pc_"));
        List<String> withReadpast = List.of(sql.highWaterMark(), sql.listGaps(), sql.tenantMarks());
        for (String statement : withReadpast) {
            Matcher hints = Pattern.compile("WITH \\(([^)]*)\\)").matcher(statement);
            int readpasts = 0;
            while (hints.find()) {
                if (hints.group(1).contains("READPAST")) {
                    readpasts++;
                    assertThat(hints.group(1)).as(statement).isEqualTo("READCOMMITTEDLOCK, READPAST");
                }
            }
            assertThat(readpasts).as(statement).isPositive();
        }
    }

    @Test
    void theTenantPageLoadNeverSkipsLockedRowsBelowTheMark() {
        DaemonSql sql = dialect.daemonSql(new TableNames("dbo", "pc_"));
        assertThat(sql.loadTenantPage()).doesNotContain("READPAST");
        assertThat(sql.loadPage()).doesNotContain("READPAST");
        // the filtered index ux_pc_events_tenant_seq (WHERE tenant_seq IS NOT NULL) matches a parameterized
        // query only when the query states the filter itself
        assertThat(sql.loadTenantPage()).contains("tenant_id = ? AND tenant_seq IS NOT NULL AND tenant_seq > ?");
    }

    @Test
    void everyKeyColumnComparesInABinaryCollation() {
        TableNames names = new TableNames("dbo", "pc_");
        List<String> ddl = new java.util.ArrayList<>();
        dialect.schemaSql(names).objects().forEach(o -> ddl.addAll(o.ddl()));
        ddl.addAll(dialect.documentTable(names, "order_summary").ddl());
        Pattern keyColumn = Pattern.compile("\\n  (id|stream_id|tenant_id|name|projection|shard) (NVARCHAR\\(\\d+\\)[^,\\n]*)");
        int keys = 0;
        for (String statement : ddl) {
            Matcher column = keyColumn.matcher(statement);
            while (column.find()) {
                keys++;
                assertThat(column.group(2)).as(column.group()).contains("COLLATE Latin1_General_100_BIN2");
            }
        }
        // ten in the log, progression, dead letters and documents; the outbox's shard and tenant; the archive's
        // stream and tenant
        assertThat(keys).isEqualTo(14);
    }

    private static ServerReport report(int level, String textType) {
        return new ServerReport("16.0.4135.4", "Developer Edition (64-bit)", "ferret", level, true,
                "OFF", "Latin1_General_100_BIN2", textType, java.sql.Connection.TRANSACTION_READ_COMMITTED);
    }

    @Test
    void theStartupReportIsOneLineOfVersionLevelSnapshotAndCollation() {
        assertThat(report(160, "nvarchar").line()).isEqualTo("SQL Server 16.0.4135.4 (Developer Edition (64-bit)),"
                + " database ferret: compatibility level 160, READ_COMMITTED_SNAPSHOT ON, snapshot isolation OFF,"
                + " key-column collation Latin1_General_100_BIN2, text parameters nvarchar,"
                + " pool isolation READ_COMMITTED");
        report(130, "nvarchar").check();
    }

    @Test
    void aCompatibilityLevelBelowOpenJsonsIsRefusedNamingTheLevelAndTheFix() {
        assertThatThrownBy(() -> report(120, "nvarchar").check())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("compatibility level 120")
                .hasMessageContaining("OPENJSON")
                .hasMessageContaining("ALTER DATABASE [ferret] SET COMPATIBILITY_LEVEL = 130");
    }

    @Test
    void textParametersSentAsVarcharAreRefusedNamingTheDriverSetting() {
        assertThatThrownBy(() -> report(160, "varchar").check())
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("sendStringParametersAsUnicode=false");
    }

    @Test
    void poolsThatStartSerializableSnapshotOrReadUncommittedAreRefusedBecauseReadpastNeedsReadCommitted() {
        for (int level : new int[] {Connection.TRANSACTION_SERIALIZABLE, SqlServerDialect.TRANSACTION_SNAPSHOT,
                Connection.TRANSACTION_READ_UNCOMMITTED}) {
            ServerReport report = new ServerReport("16.0", "Express", "ferret", 160,
                    false, "ON", "Latin1_General_100_BIN2", "nvarchar", level);
            assertThatThrownBy(report::check).isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining(ServerReport.isolationName(level)).hasMessageContaining("READ_COMMITTED");
        }
    }

    @Test
    void tablesWhoseKeysAreNotBinaryAreRefusedNamingTheCollationAndTheFix() {
        ServerReport legacy = new ServerReport("16.0", "Express", "ferret", 160,
                false, "OFF", "SQL_Latin1_General_CP1_CI_AS", "nvarchar", Connection.TRANSACTION_READ_COMMITTED);
        assertThatThrownBy(legacy::check).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("SQL_Latin1_General_CP1_CI_AS").hasMessageContaining("Latin1_General_100_BIN2")
                .hasMessageContaining("Fix:");
        // no Ferret table to read a collation from yet: nothing to refuse
        new ServerReport("16.0", "Express", "ferret", 160, false, "OFF", null, "nvarchar",
                Connection.TRANSACTION_READ_COMMITTED).check();
    }
}
