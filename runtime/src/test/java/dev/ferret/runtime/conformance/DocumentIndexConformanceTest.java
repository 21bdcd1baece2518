package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.Filter;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.QueryPlans;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Declared indexes on document properties: created by schema apply (also on a table that already holds documents),
 * read by the engine for queries on their paths (plans checked the engine's own way, {@link QueryPlans}, on a table of
 * {@value #DOCUMENTS} documents), unique per tenant where declared, and refused with a message when they cannot be.
 */
@Tag("conformance")
class DocumentIndexConformanceTest {

    private static final int DOCUMENTS = 20_000;

    public record Account(String id, String email, String status, long balance, Instant opened, Owner owner) {
    }

    public record Owner(String id, String country) {
    }

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    private static StoreOptions options(TestDatabase db, FlakyDataSource dataSource) {
        StoreOptions options = db.options();
        if (dataSource != null) {
            options.dataSource(dataSource);
        }
        options.documents().register(Account.class)
                .index(Account.class, "status")
                .index(Account.class, "balance")
                .index(Account.class, "owner.country", "status")
                .index(Account.class, "opened")
                .uniqueIndex(Account.class, "email");
        return options;
    }

    private static Account account(int i) {
        return new Account("a-" + i, "user" + i + "@example.com", i % 100 == 0 ? "frozen" : "active", i * 10L,
                Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i), new Owner("o-" + i, i % 50 == 0 ? "NO" : "FR"));
    }

    private static void fill(DocumentStore store, int from, int to) {
        try (DocumentSession session = store.openSession()) {
            for (int i = from; i < to; i++) {
                session.store(account(i));
            }
            session.saveChanges();
        }
    }

    @Test
    void queriesOnIndexedPathsReadTheIndexOnAManyDocumentTable() throws SQLException {
        TestDatabase db = resources.database("indexes");
        AtomicReference<String> lastQuery = new AtomicReference<>();
        FlakyDataSource observed = new FlakyDataSource(db.dataSource());
        observed.observeStatements(sql -> {
            if (sql.startsWith("SELECT") && sql.contains("pc_doc_account") && sql.contains(" ORDER BY ")) {
                lastQuery.set(sql);
            }
        });
        DocumentStore store = resources.add(Ferret.createStore(options(db, observed)));
        fill(store, 0, DOCUMENTS);
        if (db.engine() == DatabaseEngine.POSTGRESQL) {
            db.execute("ANALYZE " + db.table("pc_doc_account"));
        }

        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Account.class).where("status", "frozen").count()).isEqualTo(DOCUMENTS / 100);
            assertThat(session.query(Account.class).where("status", "frozen").toList()).hasSize(DOCUMENTS / 100);
            assertUsesIndex(db, lastQuery.get(), List.of("frozen"), "ix_pc_doc_account_status");

            List<Account> page = session.query(Account.class).where(Filter.ge("balance", 100_000))
                    .where(Filter.lt("balance", 101_000)).orderByDescending("balance").limit(50).toList();
            assertThat(page).hasSize(50).first().extracting(Account::balance).isEqualTo(100_990L);
            assertUsesIndex(db, lastQuery.get(), List.of(new BigDecimal(100_000), new BigDecimal(101_000), 50),
                    "ix_pc_doc_account_balance");

            assertThat(session.query(Account.class).where(Filter.eq("owner.country", "NO"))
                    .where(Filter.eq("status", "frozen")).toList()).hasSize(DOCUMENTS / 100);
            assertUsesIndex(db, lastQuery.get(), List.of("NO", "frozen"), "ix_pc_doc_account_owner_country_status");

            // points in time, through the index on their typed expression
            Instant from = Instant.parse("2026-01-01T00:00:00Z").plusSeconds(500);
            assertThat(session.query(Account.class).where(Filter.gt("opened", from))
                    .where(Filter.le("opened", from.plusSeconds(5))).orderBy("opened").toList())
                    .extracting(Account::id).containsExactly("a-501", "a-502", "a-503", "a-504", "a-505");
            assertUsesIndex(db, lastQuery.get(), List.of(from.atOffset(ZoneOffset.UTC),
                    from.plusSeconds(5).atOffset(ZoneOffset.UTC)), "ix_pc_doc_account_opened");
        }
    }

    @Test
    void aUniqueIndexRefusesADuplicateInATenantOnly() {
        TestDatabase db = resources.database("uniqueidx");
        DocumentStore store = resources.add(Ferret.createStore(options(db, null)));
        fill(store, 0, 3);
        assertThatThrownBy(() -> {
            try (DocumentSession session = store.openSession()) {
                session.store(new Account("dup", "user1@example.com", "active", 0, Instant.now(), null));
                session.saveChanges();
            }
        }).isInstanceOf(FerretException.class).satisfies(e -> assertThat(messages(e))
                .containsIgnoringCase("ux_pc_doc_account_email"));
        try (DocumentSession other = store.openSession("other")) {
            other.store(new Account("a-1", "user1@example.com", "active", 0, Instant.now(), null));
            other.saveChanges();
        }
        // documents without the property are not compared
        try (DocumentSession session = store.openSession()) {
            session.store(new Account("n1", null, "active", 0, Instant.now(), null),
                    new Account("n2", null, "active", 0, Instant.now(), null));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Account.class).where(Filter.isNull("email")).count()).isEqualTo(2);
            assertThat(session.load(Account.class, "dup")).isEmpty();
        }
    }

    @Test
    void anIndexDeclaredLaterIsBuiltOverTheDocumentsAlreadyStored() {
        TestDatabase db = resources.database("lateidx");
        StoreOptions before = db.options();
        before.documents().register(Account.class);
        try (DocumentStore store = Ferret.createStore(before)) {
            fill(store, 0, 200);
        }
        DocumentStore store = resources.add(Ferret.createStore(options(db, null)));
        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Account.class).where("status", "frozen").toList()).extracting(Account::id)
                    .containsExactly("a-0", "a-100");
            assertThat(session.query(Account.class).where(Filter.gt("balance", 1_980)).toList())
                    .extracting(Account::id).containsExactly("a-199");
        }
    }

    /** What a projection writes: one per stream. */
    public record Ledger(String id, String status, long entries) {
    }

    public record Entry(String status) {
    }

    @Test
    void aProjectionsDocumentsAreIndexedTheSameWay() throws SQLException {
        TestDatabase db = resources.database("projidx");
        StoreOptions options = db.options();
        options.events().register(Entry.class);
        options.projections().snapshot(Ledger.class, Lifecycle.INLINE, s -> s
                .create(Entry.class, (id, e) -> new Ledger(id, e.status(), 1))
                .apply(Entry.class, (l, e) -> new Ledger(l.id(), e.status(), l.entries() + 1)));
        options.documents().index(Ledger.class, "status");
        DocumentStore store = resources.add(Ferret.createStore(options));
        try (DocumentSession session = store.openSession()) {
            session.events().append("l-1", new Entry("open"), new Entry("closed"));
            session.events().append("l-2", new Entry("open"));
            session.saveChanges();
        }
        assertThat(db.indexesOf("pc_doc_ledger")).contains("ix_pc_doc_ledger_status");
        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Ledger.class).where("status", "open").single().id()).isEqualTo("l-2");
        }
    }

    /** Two paths that join to the same text with underscores: {@code a.b_c} and {@code a_b.c}. */
    public record Tangle(String id, Left a, Right a_b) {
    }

    public record Left(String b_c) {
    }

    public record Right(String c) {
    }

    @Test
    void pathsThatJoinAlikeWithUnderscoresGetColumnsOfTheirOwn() {
        TestDatabase db = resources.database("tangle");
        StoreOptions options = db.options();
        options.documents().register(Tangle.class).index(Tangle.class, "a.b_c").index(Tangle.class, "a_b.c");
        DocumentStore store = resources.add(Ferret.createStore(options));
        try (DocumentSession session = store.openSession()) {
            session.store(new Tangle("t-1", new Left("x"), new Right("y")));
            session.store(new Tangle("t-2", new Left("y"), new Right("x")));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Tangle.class).where("a.b_c", "x").toList()).extracting(Tangle::id)
                    .containsExactly("t-1");
            assertThat(session.query(Tangle.class).where("a_b.c", "x").toList()).extracting(Tangle::id)
                    .containsExactly("t-2");
        }
    }

    @Test
    void declarationsThatCannotBeBuiltFailAtStartNamingTheTypeAndPath() {
        TestDatabase db = resources.database("badidx");
        StoreOptions unregistered = db.options();
        unregistered.documents().index(Account.class, "status");
        assertThatThrownBy(() -> Ferret.createStore(unregistered)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(Account.class.getName()).hasMessageContaining("neither a registered document");

        StoreOptions badPath = db.options();
        badPath.documents().register(Account.class).index(Account.class, "owner..country");
        assertThatThrownBy(() -> Ferret.createStore(badPath)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("'owner..country'").hasMessageContaining(Account.class.getName());

        assertThatThrownBy(() -> db.options().documents().index(Account.class))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("at least one property path");

    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    /** Reads the plan of {@code sql} (tenant first, then {@code values}) and checks it reads {@code index}. */
    private static void assertUsesIndex(TestDatabase db, String sql, List<Object> values, String index)
            throws SQLException {
        String text = QueryPlans.of(db, sql, (c, ps) -> {
            ps.setString(1, StoreOptions.DEFAULT_TENANT);
            for (int i = 0; i < values.size(); i++) {
                ps.setObject(i + 2, values.get(i));
            }
        });
        if (db.engine() == DatabaseEngine.H2) {
            assertThat(text.toLowerCase(Locale.ROOT)).as(text).contains(index);
            assertThat(QueryPlans.h2RowsVisited(text)).as("rows H2 visited, in %s", text).isLessThan(DOCUMENTS / 10);
        } else if (db.engine() == DatabaseEngine.POSTGRESQL) {
            assertThat(text.toLowerCase(Locale.ROOT)).as(text).contains(index);
            assertThat(text).as(text).doesNotContain("Seq Scan");
        } else {
            assertThat(text).as(text).contains("Index=\"[" + index + "]\"").contains("PhysicalOp=\"Index Seek\"");
        }
    }
}
