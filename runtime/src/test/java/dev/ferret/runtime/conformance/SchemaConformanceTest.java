package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.Filter;
import dev.ferret.SchemaException;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("conformance")
class SchemaConformanceTest {

    @Test
    void applyingTwiceCreatesEverythingOnceAndThenNothing() {
        try (TestDatabase db = TestDatabase.create("apply")) {
            StoreOptions options = db.options().documents().register(Customer.class).and()
                    .events().register(OrderPlaced.class).and();
            try (FerretDocumentStore first = (FerretDocumentStore) Ferret.createStore(options)) {
                assertThat(first.createdAtStartup()).containsExactlyInAnyOrderElementsOf(expectedObjects(db));
                try (DocumentSession session = first.openSession()) {
                    session.store(new Customer("c1", "Kept", "Active", 1, false));
                    session.events().append("s1", new OrderPlaced("o", "c1", 1));
                    session.saveChanges();
                }
            }
            if (db.engine() == dev.ferret.DatabaseEngine.POSTGRESQL) {
                // room for rewrites in place: a projection updates its documents page after page
                assertThat(db.queryString("SELECT array_to_string(c.reloptions, ',') FROM pg_class c JOIN"
                        + " pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '" + db.schema()
                        + "' AND c.relname = 'pc_doc_customer'")).isEqualTo("fillfactor=80");
            }
            try (FerretDocumentStore second = (FerretDocumentStore) Ferret.createStore(options)) {
                assertThat(second.createdAtStartup()).isEmpty();
                assertThat(second.querySession().load(Customer.class, "c1")).isPresent();
                assertThat(second.querySession().fetchStream("s1")).hasSize(1);
            }
        }
    }

    public record Ledger(String id, String owner, double amount, Instant at) {
    }

    @Test
    void theExportedSchemaStatementsAreEverythingAStoreThatOnlyVerifiesNeedsAndApplyThenCreatesNothing() {
        try (TestDatabase db = TestDatabase.create("export")) {
            StoreOptions options = db.options().documents().register(Customer.class).register(Ledger.class)
                    .index(Ledger.class, "amount").index(Ledger.class, "at").uniqueIndex(Ledger.class, "owner")
                    .and().events().register(OrderPlaced.class).and();
            List<String> statements = Ferret.schemaStatements(options, db.engine());
            assertThat(Ferret.schemaScript(options, db.engine())).contains(statements.get(statements.size() - 1));
            // run by hand, as a DBA would, with no store connected
            statements.forEach(db::execute);
            options.applyAllDatabaseChangesOnStartup(false);
            try (DocumentStore verifying = Ferret.createStore(options)) {
                try (DocumentSession session = verifying.openSession()) {
                    session.store(new Ledger("l1", "ann", 1.5e7, Instant.parse("2026-01-01T00:00:00Z")));
                    session.saveChanges();
                }
                assertThat(verifying.querySession().query(Ledger.class)
                        .where(Filter.gt("amount", 1_000_000)).toList()).hasSize(1);
            }
            options.applyAllDatabaseChangesOnStartup(true);
            try (FerretDocumentStore applying = (FerretDocumentStore) Ferret.createStore(options)) {
                assertThat(applying.createdAtStartup()).isEmpty();
            }
        }
    }

    private static List<String> expectedObjects(TestDatabase db) {
        List<String> expected = new ArrayList<>(List.of("pc_events", "pc_events_archive", "pc_streams", "pc_tenant_sequences", "pc_event_progression",
                "pc_doc_customer", "pc_dead_letters", "pc_outbox", "index:ix_pc_dead_letters_shard",
                "index:ix_pc_outbox_undelivered"));
        expected.add("schema " + db.schema());
        if (db.engine() == dev.ferret.DatabaseEngine.H2) {
            expected.add("pc_json_text");
            expected.add("pc_shard_locks");
        }
        if (db.engine() == dev.ferret.DatabaseEngine.POSTGRESQL) {
            expected.add("pc_json_instant");
        }
        return expected;
    }

    @Test
    void threeNodesStartingAtOnceOnAnEmptySchemaAllSucceed() throws Exception {
        try (TestDatabase db = TestDatabase.create("race")) {
            int nodes = 3;
            CyclicBarrier barrier = new CyclicBarrier(nodes);
            ExecutorService pool = Executors.newFixedThreadPool(nodes);
            List<CompletableFuture<FerretDocumentStore>> starts = new ArrayList<>();
            try {
                for (int i = 0; i < nodes; i++) {
                    starts.add(CompletableFuture.supplyAsync(() -> {
                        try {
                            barrier.await(30, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        return (FerretDocumentStore) Ferret.createStore(
                                db.options().documents().register(Customer.class).and());
                    }, pool));
                }
                List<FerretDocumentStore> stores = new ArrayList<>();
                for (CompletableFuture<FerretDocumentStore> start : starts) {
                    stores.add(start.get(120, TimeUnit.SECONDS));
                }
                // exactly one node created each object; the others found it there
                List<String> created = new ArrayList<>();
                stores.forEach(s -> created.addAll(s.createdAtStartup()));
                assertThat(created).containsExactlyInAnyOrderElementsOf(expectedObjects(db));
                for (DocumentStore store : stores) {
                    try (DocumentSession session = store.openSession()) {
                        session.events().append("race-" + System.identityHashCode(store), new OrderPlaced("o", "c", 1));
                        session.saveChanges();
                    }
                    store.close();
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void withoutApplyAMissingSchemaFailsStartupNamingWhatIsMissing() {
        try (TestDatabase db = TestDatabase.create("verify")) {
            assertThatThrownBy(() -> Ferret.createStore(db.options().applyAllDatabaseChangesOnStartup(false)
                    .documents().register(Customer.class).and()))
                    .isInstanceOf(SchemaException.class)
                    .hasMessageContaining(db.schema())
                    .hasMessageContaining("pc_events")
                    .hasMessageContaining("pc_doc_customer")
                    .hasMessageContaining("applyAllDatabaseChangesOnStartup");
            Ferret.createStore(db.options()).close();
            assertThatThrownBy(() -> Ferret.createStore(db.options().applyAllDatabaseChangesOnStartup(false)
                    .documents().register(Customer.class).and()))
                    .isInstanceOf(SchemaException.class)
                    .hasMessageContaining("[pc_doc_customer]");
        }
    }

    @Test
    void invalidIdentifiersAreRejectedNamingTheSettingAndValue() {
        StoreOptions options = new StoreOptions();
        assertThatThrownBy(() -> options.schema("ferret; DROP TABLE x"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("schema")
                .hasMessageContaining("'ferret; DROP TABLE x'");
        assertThatThrownBy(() -> options.tablePrefix("pc-"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("tablePrefix").hasMessageContaining("'pc-'");
        assertThatThrownBy(() -> options.documents().register(Customer.class, "bad name", Customer::id))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'bad name'");
        assertThatThrownBy(() -> options.schema(null)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("null");
    }
}
