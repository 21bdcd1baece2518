package dev.ferret.runtime.dialect.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The probe's server-side bound, without a database. */
class PostgresShardLocksTest {

    @Test
    void theProbeBoundIsABoundParameterInMilliseconds() {
        assertThat(PostgresShardLocks.PROBE_TIMEOUT).isEqualTo("SELECT set_config('statement_timeout', ?, true)");
        assertThat(PostgresShardLocks.statementTimeout(Duration.ofMillis(300))).isEqualTo("300ms");
        assertThat(PostgresShardLocks.statementTimeout(Duration.ofMillis(500))).isEqualTo("500ms");
        assertThat(PostgresShardLocks.statementTimeout(Duration.ofSeconds(3))).isEqualTo("3000ms");
    }
}
