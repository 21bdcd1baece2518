package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.QuerySession;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.testing.TestDatabase;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * An id is the same id on every engine: ids that differ only in case are different documents, streams and tenants
 * (SQL Server's default collations would make them one; its key columns are binary), and an id ending in a space is
 * refused at the call on every engine (SQL Server pads strings with spaces before comparing, whatever the
 * collation, so there {@code "a"} and {@code "a "} would be one key). Each test writes under tenants of its own.
 */
@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KeyIdentityConformanceTest {

    private TestDatabase db;
    private DocumentStore store;

    @BeforeAll
    void start() {
        db = TestDatabase.create("keyidentity");
        store = Ferret.createStore(db.options().documents().register(Customer.class).and());
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

    private static String tenant() {
        return "t-" + UUID.randomUUID();
    }

    private long rows(String table, String tenant) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table(table) + " WHERE tenant_id = '" + tenant + "'");
    }

    @Test
    void documentIdsThatDifferOnlyInCaseAreTwoDocuments() {
        String tenant = tenant();
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer("A", "Upper", "Active", 1, false));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer("a", "Lower", "Active", 1, false));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.load(Customer.class, "A").orElseThrow().name()).isEqualTo("Upper");
        assertThat(query.load(Customer.class, "a").orElseThrow().name()).isEqualTo("Lower");
        assertThat(query.loadMany(Customer.class, List.of("a"))).extracting(Customer::name).containsExactly("Lower");
        assertThat(query.loadMany(Customer.class, List.of("A", "a"))).extracting(Customer::name)
                .containsExactlyInAnyOrder("Upper", "Lower");
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(2);

        try (DocumentSession session = store.openSession(tenant)) {
            session.delete(Customer.class, "a");
            session.saveChanges();
        }
        assertThat(query.load(Customer.class, "a")).isEmpty();
        assertThat(query.load(Customer.class, "A").orElseThrow().name()).isEqualTo("Upper");
    }

    @Test
    void streamIdsThatDifferOnlyInCaseAreTwoStreams() {
        String tenant = tenant();
        String upper = "Order-" + UUID.randomUUID();
        String lower = upper.toLowerCase(java.util.Locale.ROOT);
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(upper, new OrderPlaced("o1", "ann", 1));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession(tenant)) {
            // expecting version 0: a stream that is new, which it is only if the case makes it another stream
            session.events().append(lower, 0, List.of(new OrderPlaced("o2", "bob", 2)));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.fetchStream(upper)).extracting(EventEnvelope::data)
                .containsExactly(new OrderPlaced("o1", "ann", 1));
        assertThat(query.fetchStream(lower)).extracting(EventEnvelope::data)
                .containsExactly(new OrderPlaced("o2", "bob", 2));
        assertThat(query.fetchStreamState(upper).orElseThrow().version()).isEqualTo(1);
        assertThat(query.fetchStreamState(lower).orElseThrow().version()).isEqualTo(1);
        assertThat(rows("pc_streams", tenant)).isEqualTo(2);
    }

    @Test
    void tenantIdsThatDifferOnlyInCaseShareNoRows() {
        String upper = "Acme-" + UUID.randomUUID();
        String lower = upper.toLowerCase(java.util.Locale.ROOT);
        String stream = Fixtures.newStreamId();
        try (DocumentSession session = store.openSession(upper)) {
            session.store(new Customer("c1", "Upper", "Active", 1, false));
            session.events().append(stream, new OrderPlaced("o1", "ann", 1));
            session.saveChanges();
        }
        QuerySession lowerQuery = store.querySession(lower);
        assertThat(lowerQuery.load(Customer.class, "c1")).isEmpty();
        assertThat(lowerQuery.fetchStream(stream)).isEmpty();
        try (DocumentSession session = store.openSession(lower)) {
            session.store(new Customer("c1", "Lower", "Active", 1, false));
            session.events().append(stream, 0, List.of(new OrderPlaced("o2", "bob", 2)));
            session.saveChanges();
        }
        assertThat(store.querySession(upper).load(Customer.class, "c1").orElseThrow().name()).isEqualTo("Upper");
        assertThat(lowerQuery.load(Customer.class, "c1").orElseThrow().name()).isEqualTo("Lower");
        assertThat(store.querySession(upper).fetchStream(stream)).singleElement()
                .satisfies(e -> assertThat(e.tenantId()).isEqualTo(upper));
        assertThat(rows("pc_doc_customer", upper)).isEqualTo(1);
        assertThat(rows("pc_doc_customer", lower)).isEqualTo(1);
    }

    @Test
    void idsEndingInASpaceAreRefusedAtTheCallAndNothingIsWritten() {
        String tenant = tenant();
        try (DocumentSession session = store.openSession(tenant)) {
            assertThatThrownBy(() -> session.store(new Customer("a ", "Padded", "Active", 1, false)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not end with a space");
            assertThatThrownBy(() -> session.events().append("order-1 ", new OrderPlaced("o", "x", 1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stream id")
                    .hasMessageContaining("must not end with a space");
            session.store(new Customer("a", "Plain", "Active", 1, false));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThatThrownBy(() -> query.load(Customer.class, "a ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not end with a space");
        assertThatThrownBy(() -> query.fetchStream("order-1 ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.openSession(tenant + " ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tenant id").hasMessageContaining("must not end with a space");
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(1);
        assertThat(rows("pc_streams", tenant)).isZero();
        assertThat(rows("pc_events", tenant)).isZero();
    }

    @Test
    void anIdWithOtherTrailingWhitespaceIsAnIdOfItsOwn() {
        String tenant = tenant();
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer("b", "Plain", "Active", 1, false), new Customer("b\t", "Tab", "Active", 1, false));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.load(Customer.class, "b").orElseThrow().name()).isEqualTo("Plain");
        assertThat(query.load(Customer.class, "b\t").orElseThrow().name()).isEqualTo("Tab");
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(2);
    }
}
