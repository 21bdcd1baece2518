package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.MissingIdException;
import dev.ferret.QuerySession;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.Invoice;
import dev.ferret.runtime.conformance.Fixtures.NoId;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.WrongIdType;
import dev.ferret.runtime.testing.TestDatabase;
import java.util.List;
import java.util.ArrayList;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DocumentStoreConformanceTest {

    private TestDatabase db;
    private DocumentStore store;

    @BeforeAll
    void start() {
        db = TestDatabase.create("documents");
        store = Ferret.createStore(db.options().documents().register(Customer.class).register(Invoice.class).and());
    }

    @AfterAll
    void stop() {
        if (store != null) {
            store.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static String id() {
        return "c-" + UUID.randomUUID();
    }

    @Test
    void manyDocumentsStoredInOneUnitOfWorkAreEachWrittenOnceAndReplacedWithTheirVersionBumped() {
        String tenant = "many-" + UUID.randomUUID();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            ids.add(id());
        }
        try (DocumentSession session = store.openSession(tenant)) {
            ids.forEach(id -> session.store(new Customer(id, "n", "Active", 1, false)));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession(tenant)) {
            // one deleted among the replaced: both kinds of change in one write of the same type
            ids.subList(1, ids.size()).forEach(id -> session.store(new Customer(id, "n", "Lapsed", 2, true)));
            session.delete(Customer.class, ids.get(0));
            session.saveChanges();
        }
        String table = db.table("pc_doc_customer");
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE tenant_id = '" + tenant + "'"))
                .isEqualTo(299);
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + table + " WHERE tenant_id = '" + tenant
                + "' AND version = 2")).isEqualTo(299);
        try (QuerySession session = store.querySession(tenant)) {
            assertThat(session.load(Customer.class, ids.get(299))).contains(new Customer(ids.get(299), "n", "Lapsed",
                    2, true));
            assertThat(session.load(Customer.class, ids.get(0))).isEmpty();
        }
    }

    @Test
    void moreDocumentsOfOneTypeThanAnArrayParameterHoldsAreWrittenAndLoadedTogether() {
        // H2 refuses arrays longer than 65,536; writes and loads bind at most 10,000 ids at a time
        String tenant = "bulk-" + UUID.randomUUID();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 70_000; i++) {
            ids.add("b-" + i);
        }
        try (DocumentSession session = store.openSession(tenant)) {
            ids.forEach(id -> session.store(new Customer(id, "n", "Active", 1, false)));
            session.saveChanges();
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_doc_customer") + " WHERE tenant_id = '"
                + tenant + "'")).isEqualTo(70_000);
        try (QuerySession session = store.querySession(tenant)) {
            assertThat(session.loadMany(Customer.class, ids)).hasSize(70_000);
        }
    }

    @Test
    void loadManyReturnsEachDocumentOnceHoweverOftenItsIdIsAskedFor() {
        String id = id();
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(id, "Dora", "Active", 1, false));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.loadMany(Customer.class, List.of(id, id, id)))
                    .containsExactly(new Customer(id, "Dora", "Active", 1, false));
        }
    }

    @Test
    void storeLoadReplaceAndDelete() {
        String id = id();
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(id, "Alice", "Active", 2, true));
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, id)).contains(new Customer(id, "Alice", "Active", 2, true));

        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(id, "Alice", "Lapsed", 2, true));
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, id).orElseThrow().status()).isEqualTo("Lapsed");
        assertThat(db.queryLong("SELECT version FROM " + db.table("pc_doc_customer") + " WHERE id = '" + id + "'"))
                .isEqualTo(2);

        try (DocumentSession session = store.openSession()) {
            session.delete(Customer.class, id);
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, id)).isEmpty();
    }

    @Test
    void beansWithUuidIdsRoundTrip() {
        UUID id = UUID.randomUUID();
        try (DocumentSession session = store.openSession()) {
            session.store(new Invoice(id, "bob", 12_345L));
            session.saveChanges();
        }
        Invoice loaded = store.querySession().load(Invoice.class, id).orElseThrow();
        assertThat(loaded.getId()).isEqualTo(id);
        assertThat(loaded.getCents()).isEqualTo(12_345L);
        assertThat(loaded.getCustomer()).isEqualTo("bob");
    }

    @Test
    void loadManySkipsMissingIds() {
        String a = id();
        String b = id();
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(a, "A", "Active", 1, false), new Customer(b, "B", "Active", 1, false));
            session.saveChanges();
        }
        assertThat(store.querySession().loadMany(Customer.class, List.of(a, b, id())))
                .extracting(Customer::id).containsExactlyInAnyOrder(a, b);
        assertThat(store.querySession().loadMany(Customer.class, List.of())).isEmpty();
    }

    @Test
    void lastChangeToADocumentInOneUnitOfWorkWins() {
        String kept = id();
        String gone = id();
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(kept, "First", "Active", 1, false));
            session.store(new Customer(kept, "Second", "Active", 1, false));
            session.store(new Customer(gone, "Gone", "Active", 1, false));
            session.delete(Customer.class, gone);
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, kept).orElseThrow().name()).isEqualTo("Second");
        assertThat(store.querySession().load(Customer.class, gone)).isEmpty();
        assertThat(db.queryLong("SELECT version FROM " + db.table("pc_doc_customer") + " WHERE id = '" + kept + "'"))
                .isEqualTo(1);
    }

    @Test
    void queryFiltersOnTopLevelPropertiesOfEveryJsonKind() {
        String tenant = "query-" + UUID.randomUUID();
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer("q1", "Ann", "Active", 1, true),
                    new Customer("q2", "Ben", "Active", 2, false),
                    new Customer("q3", "Cy", "Closed", 2, true),
                    new Customer("q4", "It's \"quoted\"", "Active", 3, false));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.query(Customer.class).toList()).extracting(Customer::id)
                .containsExactly("q1", "q2", "q3", "q4");
        assertThat(query.query(Customer.class).where("status", "Active").toList()).extracting(Customer::id)
                .containsExactly("q1", "q2", "q4");
        assertThat(query.query(Customer.class).where("tier", 2).toList()).extracting(Customer::id)
                .containsExactly("q2", "q3");
        assertThat(query.query(Customer.class).where("vip", true).where("status", "Active").toList())
                .extracting(Customer::id).containsExactly("q1");
        assertThat(query.query(Customer.class).where("name", "It's \"quoted\"").toList())
                .extracting(Customer::id).containsExactly("q4");
        assertThat(query.query(Customer.class).where("status", "Active").count()).isEqualTo(3);
        assertThat(query.query(Customer.class).where("status", "Nope").count()).isZero();
        // a property the class does not declare is a typo, refused at the call (it would match nothing)
        assertThatThrownBy(() -> query.query(Customer.class).where("missing", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no property 'missing'");
    }

    @Test
    void queryPropertyMustBeAPlainIdentifier() {
        assertThatThrownBy(() -> store.querySession().query(Customer.class).where("status' OR '1'='1", "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("property path 'status' OR");
        assertThatThrownBy(() -> store.querySession().query(Customer.class).where("status", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'status'");
    }

    @Test
    void tenantsSeeOnlyTheirOwnDocuments() {
        String id = id();
        try (DocumentSession session = store.openSession("red")) {
            session.store(new Customer(id, "Red", "Active", 1, false));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession("blue")) {
            session.store(new Customer(id, "Blue", "Active", 1, false));
            session.saveChanges();
        }
        assertThat(store.querySession("red").load(Customer.class, id).orElseThrow().name()).isEqualTo("Red");
        assertThat(store.querySession("blue").load(Customer.class, id).orElseThrow().name()).isEqualTo("Blue");
        assertThat(store.querySession().load(Customer.class, id)).isEmpty();
    }

    @Test
    void documentsAndEventsOfOneUnitOfWorkCommitTogether() {
        String id = id();
        String stream = Fixtures.newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer(id, "Both", "Active", 1, false));
            session.events().append(stream, new OrderPlaced("o", id, 1));
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, id)).isPresent();
        assertThat(store.querySession().fetchStream(stream)).hasSize(1);
    }

    @Test
    void badDocumentsAreRejectedWithTheReason() {
        try (DocumentSession session = store.openSession()) {
            assertThatThrownBy(() -> session.store(new OrderPlaced("x", "y", 1)))
                    .isInstanceOf(FerretException.class).hasMessageContaining("OrderPlaced")
                    .hasMessageContaining("not registered");
            assertThatThrownBy(() -> session.store(new Customer(null, "n", "s", 1, false)))
                    .isInstanceOf(MissingIdException.class).hasMessageContaining("null");
            assertThatThrownBy(() -> session.store((Object) null)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> session.load(Customer.class, null)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aDocumentTypeWithoutAnIdFailsAtStartup() {
        assertThatThrownBy(() -> Ferret.createStore(db.options().documents().register(NoId.class).and()))
                .isInstanceOf(MissingIdException.class).hasMessageContaining(NoId.class.getName())
                .hasMessageContaining("'id'");
        assertThatThrownBy(() -> Ferret.createStore(db.options().documents().register(WrongIdType.class).and()))
                .isInstanceOf(MissingIdException.class).hasMessageContaining("java.lang.Object");
    }
}
