package dev.ferret.runtime.dialect.sqlserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.runtime.dialect.TableNames;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlServerDialectTest {

    private final SqlServerDialect dialect = new SqlServerDialect();

    @Test
    void idListsBecomeJsonArraysForOpenJson() {
        assertThat(SqlServerDialect.jsonArrayOf(List.of("a", "b\"c", "d\\e", "f\ng")))
                .isEqualTo("[\"a\",\"b\\\"c\",\"d\\\\e\",\"f\\u000ag\"]");
        assertThat(SqlServerDialect.jsonArrayOf(List.of())).isEqualTo("[]");
    }

    @Test
    void propertiesAreAddressedByAQuotedJsonPath() {
        assertThat(dialect.propertyArgument("status")).isEqualTo("$.\"status\"");
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
}
