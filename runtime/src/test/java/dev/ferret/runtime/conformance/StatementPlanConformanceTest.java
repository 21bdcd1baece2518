package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.testing.QueryPlans;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The plans of the statements a daemon page runs for every event, read the engine's own way ({@link QueryPlans})
 * on a table of {@value #DOCUMENTS} documents that was never analyzed (as during a catch-up that is filling it): the
 * page's document read-back must seek the primary key once per id, so that its cost follows the page, not the
 * table.
 */
@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatementPlanConformanceTest {

    private static final int DOCUMENTS = 20_000;
    private static final int PAGE = 500;

    private final TestResources resources = new TestResources();
    private TestDatabase db;
    private DocumentStore store;
    private DocumentSql sql;

    @BeforeAll
    void fill() {
        db = resources.database("plans");
        store = resources.add(Ferret.createStore(db.options().documents().register(Customer.class).and()));
        try (DocumentSession session = store.openSession()) {
            for (int i = 0; i < DOCUMENTS; i++) {
                session.store(new Customer("c-" + i, "name " + i, "active", i % 5, false));
            }
            session.saveChanges();
        }
        Dialect dialect = Dialects.of(db.engine());
        sql = dialect.documentSql(new TableNames(db.schema(), "pc_"), "customer");
    }

    @AfterAll
    void stop() throws Exception {
        resources.close();
    }

    @Test
    void aPageReadsItsDocumentsBackWithOnePrimaryKeySeekPerIdOnATableThatWasNeverAnalyzed() throws SQLException {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < PAGE; i++) {
            ids.add("c-" + (i * 37 % DOCUMENTS));
        }
        ids.add("c-absent");
        String plan = QueryPlans.of(db, sql.loadMany(), (c, ps) -> bind(c, ps, ids));
        if (db.engine() == DatabaseEngine.H2) {
            assertThat(plan).as(plan).containsPattern("PRIMARY_KEY_\\w*: TENANT_ID = \\?1\\s+AND ID = K.ID");
            assertThat(QueryPlans.h2RowsVisited(plan)).as("rows H2 visited, in %s", plan).isLessThan(4L * (PAGE + 1));
        } else if (db.engine() == DatabaseEngine.POSTGRESQL) {
            assertThat(plan).as(plan).contains("Nested Loop").containsPattern("Index Scan using \\w+ on \\w+ x")
                    .doesNotContain("Seq Scan").doesNotContain("Hash Join").doesNotContain("Bitmap");
            assertThat(plan).as(plan).containsPattern("rows=1 loops=" + (PAGE + 1));
        } else {
            // the clustered primary key, sought, not scanned
            assertThat(plan).as(plan).contains("Index=\"[pk_pc_doc_customer]\"")
                    .contains("PhysicalOp=\"Clustered Index Seek\"");
        }
        assertThat(count(sql.loadMany(), ids)).as("documents found").isEqualTo(PAGE);
    }

    private int count(String statement, List<String> ids) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(statement)) {
            bind(c, ps, ids);
            int rows = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                }
            }
            return rows;
        }
    }

    private void bind(Connection c, PreparedStatement ps, List<String> ids) throws SQLException {
        ps.setString(1, StoreOptions.DEFAULT_TENANT);
        Dialects.of(db.engine()).bindIds(c, ps, 2, ids);
    }
}
