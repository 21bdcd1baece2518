package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseEngine;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pool Ferret opens itself when given a URL. On PostgreSQL its connections plan every statement with its
 * parameters ({@code plan_cache_mode=force_custom_plan}), so no statement keeps a plan made while a table was empty.
 */
@Tag("conformance")
class OwnedPoolConformanceTest {

    @Test
    void aPoolFerretOpensPlansEachStatementWithItsParametersOnPostgresql() throws SQLException {
        try (TestDatabase db = TestDatabase.create("pool");
             HikariDataSource pool = Ferret.openPool(db.url(), null, null, "the test database", "test", 2);
             Connection c = pool.getConnection();
             Statement s = c.createStatement()) {
            if (db.engine() == DatabaseEngine.POSTGRESQL) {
                try (ResultSet rs = s.executeQuery("SELECT current_setting('plan_cache_mode')")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("force_custom_plan");
                }
            } else {
                // the setting is PostgreSQL's; elsewhere the pool opens without it
                try (ResultSet rs = s.executeQuery("SELECT 1")) {
                    assertThat(rs.next()).isTrue();
                }
            }
        }
    }
}
