package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.IdLimits;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Stream, document and tenant ids at their limit round-trip; one character more is refused at the call, naming the
 * kind of id, its length and the limit, before anything is written or queried. Each test writes under a tenant of
 * its own, so "nothing was written" is a row count of that tenant.
 */
@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdLimitsConformanceTest {

    private TestDatabase db;
    private DocumentStore store;

    @BeforeAll
    void start() {
        db = TestDatabase.create("idlimits");
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

    /** An id of {@code length} characters ending in {@code last}, otherwise unique to the call. */
    private static String idOf(int length, char last) {
        String start = UUID.randomUUID().toString();
        return start + "x".repeat(length - start.length() - 1) + last;
    }

    private static String tenant() {
        return "t-" + UUID.randomUUID();
    }

    private long rows(String table, String tenant) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table(table) + " WHERE tenant_id = '" + tenant + "'");
    }

    private static void assertRefused(ThrowingCallable call, String kind, String id, int limit) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(kind)
                .hasMessageContaining(id.length() + " characters")
                .hasMessageContaining("limit of " + limit)
                // a prefix to recognise it by, never the whole id
                .hasMessageContaining(id.substring(0, 20))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(id));
    }

    @Test
    void documentIdsAtTheLimitRoundTripThroughStoreLoadLoadManyAndDelete() {
        String tenant = tenant();
        String a = idOf(IdLimits.MAX_ID_LENGTH, 'a');
        String b = a.substring(0, a.length() - 1) + 'b';
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer(a, "A", "Active", 1, false), new Customer(b, "B", "Active", 1, false));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.load(Customer.class, a).orElseThrow().name()).isEqualTo("A");
        assertThat(query.load(Customer.class, b).orElseThrow().name()).isEqualTo("B");
        assertThat(query.loadMany(Customer.class, List.of(a, b))).extracting(Customer::id)
                .containsExactlyInAnyOrder(a, b);
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(2);

        try (DocumentSession session = store.openSession(tenant)) {
            session.delete(Customer.class, a);
            session.saveChanges();
        }
        assertThat(query.load(Customer.class, a)).isEmpty();
        assertThat(query.load(Customer.class, b)).isPresent();
    }

    @Test
    void documentIdsOneOverTheLimitDifferingOnlyInTheLastCharacterAreRefusedAndNothingIsWritten() {
        String tenant = tenant();
        int over = IdLimits.MAX_ID_LENGTH + 1;
        String first = idOf(over, '1');
        String second = first.substring(0, over - 1) + '2';
        String kind = "id of document type " + Customer.class.getName();
        try (DocumentSession session = store.openSession(tenant)) {
            assertRefused(() -> session.store(new Customer(first, "First", "Active", 1, false)), kind, first,
                    IdLimits.MAX_ID_LENGTH);
            assertRefused(() -> session.store(new Customer(second, "Second", "Active", 1, false)), kind, second,
                    IdLimits.MAX_ID_LENGTH);
            // a refused call buffers none of its documents, not even the valid one before the bad one
            assertRefused(() -> session.store(new Customer("fine", "Fine", "Active", 1, false),
                    new Customer(first, "First", "Active", 1, false)), kind, first, IdLimits.MAX_ID_LENGTH);
            assertRefused(() -> session.delete(Customer.class, first), kind, first, IdLimits.MAX_ID_LENGTH);
            session.saveChanges();
        }
        assertThat(rows("pc_doc_customer", tenant)).isZero();
    }

    @Test
    void anOverLongIdNeverReachesTheDocumentItsFirstCharactersName() {
        String tenant = tenant();
        String atLimit = idOf(IdLimits.MAX_ID_LENGTH, 'k');
        String longer = atLimit + 'z';
        try (DocumentSession session = store.openSession(tenant)) {
            session.store(new Customer(atLimit, "Kept", "Active", 1, false));
            session.saveChanges();
        }
        String kind = "id of document type " + Customer.class.getName();
        try (DocumentSession session = store.openSession(tenant)) {
            assertRefused(() -> session.store(new Customer(longer, "Overwriter", "Active", 1, false)), kind, longer,
                    IdLimits.MAX_ID_LENGTH);
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertRefused(() -> query.load(Customer.class, longer), kind, longer, IdLimits.MAX_ID_LENGTH);
        assertRefused(() -> query.loadMany(Customer.class, List.of(atLimit, longer)), kind, longer,
                IdLimits.MAX_ID_LENGTH);
        assertThat(query.load(Customer.class, atLimit).orElseThrow().name()).isEqualTo("Kept");
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(1);
    }

    /**
     * Below the API: the statements themselves refuse an over-long id instead of cutting it to the column width
     * (H2 cuts a string CAST to a shorter VARCHAR(n) silently, so its MERGE sources must not cast to the width).
     */
    @Test
    void theUpsertStatementsRefuseAnOverLongIdInsteadOfCuttingIt() throws SQLException {
        String tenant = tenant();
        String longer = idOf(IdLimits.MAX_ID_LENGTH + 1, 'z');
        Dialect dialect = Dialects.of(db.engine());
        TableNames names = new TableNames(db.schema(), "pc_");
        OffsetDateTime now = OffsetDateTime.now();
        try (Connection c = db.dataSource().getConnection()) {
            try (PreparedStatement ps = c.prepareStatement(dialect.documentSql(names, "customer").upsert())) {
                ps.setString(1, longer);
                ps.setString(2, tenant);
                ps.setString(3, "{\"id\":\"x\"}");
                ps.setObject(4, now);
                assertThatThrownBy(ps::executeUpdate).isInstanceOf(SQLException.class);
            }
            try (PreparedStatement ps = c.prepareStatement(dialect.eventSql(names).upsertStream())) {
                ps.setString(1, longer);
                ps.setString(2, tenant);
                ps.setString(3, null);
                ps.setLong(4, 1);
                ps.setObject(5, now);
                ps.setObject(6, now);
                assertThatThrownBy(ps::execute).isInstanceOf(SQLException.class);
            }
        }
        assertThat(rows("pc_doc_customer", tenant)).isZero();
        assertThat(rows("pc_streams", tenant)).isZero();
    }

    @Test
    void streamIdsAtTheLimitRoundTrip() {
        String tenant = tenant();
        String appended = idOf(IdLimits.MAX_ID_LENGTH, 'a');
        String started = appended.substring(0, appended.length() - 1) + 's';
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(appended, new OrderPlaced("o1", "ann", 1));
            session.events().startStream(started, Customer.class, List.of(new OrderPlaced("o2", "bob", 2)));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(appended, 1, List.of(new OrderShipped("o1", "dhl")));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.fetchStream(appended)).extracting(EventEnvelope::streamId).containsOnly(appended)
                .hasSize(2);
        assertThat(query.fetchStream(started)).extracting(EventEnvelope::data)
                .containsExactly(new OrderPlaced("o2", "bob", 2));
        assertThat(query.fetchStreamState(appended).orElseThrow().version()).isEqualTo(2);
        assertThat(query.fetchStreamState(started).orElseThrow().streamId()).isEqualTo(started);
    }

    @Test
    void streamIdsOneOverTheLimitAreRefusedOnAppendAndFetchAndNothingIsWritten() {
        String tenant = tenant();
        int over = IdLimits.MAX_ID_LENGTH + 1;
        String first = idOf(over, '1');
        String second = first.substring(0, over - 1) + '2';
        try (DocumentSession session = store.openSession(tenant)) {
            assertRefused(() -> session.events().append(first, new OrderPlaced("o", "x", 1)), "stream id", first,
                    IdLimits.MAX_ID_LENGTH);
            assertRefused(() -> session.events().append(second, List.of(new OrderPlaced("o", "x", 2))),
                    "stream id", second, IdLimits.MAX_ID_LENGTH);
            assertRefused(() -> session.events().append(first, 0, List.of(new OrderPlaced("o", "x", 3))),
                    "stream id", first, IdLimits.MAX_ID_LENGTH);
            // checked before the expected version, so the message about it never quotes the whole id
            assertRefused(() -> session.events().append(first, -2, List.of(new OrderPlaced("o", "x", 3))),
                    "stream id", first, IdLimits.MAX_ID_LENGTH);
            assertRefused(() -> session.events().startStream(second, Customer.class,
                    List.of(new OrderPlaced("o", "x", 4))), "stream id", second, IdLimits.MAX_ID_LENGTH);
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertRefused(() -> query.fetchStream(first), "stream id", first, IdLimits.MAX_ID_LENGTH);
        assertRefused(() -> query.fetchStreamState(second), "stream id", second, IdLimits.MAX_ID_LENGTH);
        assertThat(rows("pc_events", tenant)).isZero();
        assertThat(rows("pc_streams", tenant)).isZero();
    }

    @Test
    void idsWithControlCharactersOrALoneSurrogateAreRefusedEverywhereNamingTheCharacterAndNothingIsWritten() {
        String tenant = tenant();
        for (String bad : List.of("nul\u0000id", "two\nlines", "cr\rlf", "lone\uD800surrogate", "end\uDC00")) {
            try (DocumentSession session = store.openSession(tenant)) {
                assertThatThrownBy(() -> session.events().append(bad, new OrderPlaced("o", "x", 1)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stream id")
                        .hasMessageContaining("U+")
                        // the message shows the character escaped: no raw line break reaches a log
                        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\r")
                                .doesNotContain("\u0000"));
                assertThatThrownBy(() -> session.store(new Customer(bad, "n", "active", 1, false)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("id of document type");
                session.saveChanges();
            }
            assertThatThrownBy(() -> store.openSession(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("tenant id");
        }
        // a surrogate pair is a character like any other
        String emoji = "trip-\uD83D\uDE80";
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(emoji, new OrderPlaced("o", "x", 1));
            session.saveChanges();
        }
        assertThat(store.querySession(tenant).fetchStream(emoji)).hasSize(1);
        assertThat(rows("pc_events", tenant)).isOne();
    }

    @Test
    void tenantIdsAtTheLimitRoundTripDocumentsAndEvents() {
        String tenant = idOf(IdLimits.MAX_TENANT_ID_LENGTH, 't');
        String stream = Fixtures.newStreamId();
        try (DocumentSession session = store.openSession(tenant)) {
            assertThat(session.tenantId()).isEqualTo(tenant);
            session.store(new Customer("c1", "Tess", "Active", 1, false));
            session.events().append(stream, new OrderPlaced("o", "tess", 1));
            session.saveChanges();
        }
        QuerySession query = store.querySession(tenant);
        assertThat(query.load(Customer.class, "c1").orElseThrow().name()).isEqualTo("Tess");
        assertThat(query.fetchStream(stream)).singleElement()
                .satisfies(e -> assertThat(e.tenantId()).isEqualTo(tenant));
        assertThat(rows("pc_doc_customer", tenant)).isEqualTo(1);
    }

    @Test
    void tenantIdsOneOverTheLimitAreRefusedWhenASessionOpensAndNothingIsWritten() {
        int over = IdLimits.MAX_TENANT_ID_LENGTH + 1;
        String first = idOf(over, '1');
        String second = first.substring(0, over - 1) + '2';
        assertRefused(() -> store.openSession(first), "tenant id", first, IdLimits.MAX_TENANT_ID_LENGTH);
        assertRefused(() -> store.openSession(second), "tenant id", second, IdLimits.MAX_TENANT_ID_LENGTH);
        assertRefused(() -> store.querySession(first), "tenant id", first, IdLimits.MAX_TENANT_ID_LENGTH);
        // the form a database would keep of either: its first MAX_TENANT_ID_LENGTH characters
        String cut = first.substring(0, IdLimits.MAX_TENANT_ID_LENGTH);
        assertThat(rows("pc_doc_customer", cut)).isZero();
        assertThat(rows("pc_events", cut)).isZero();
    }

    @Test
    void aTenancyMappingWithAnOverLongTenantIdFailsNamingTheSetting() {
        String tenant = idOf(IdLimits.MAX_TENANT_ID_LENGTH + 1, 'x');
        assertThatThrownBy(() -> StoreOptions.requireTenantId("tenant of tenancy database eu", tenant))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("tenant of tenancy database eu")
                .hasMessageContaining((IdLimits.MAX_TENANT_ID_LENGTH + 1) + " characters")
                .hasMessageContaining("limit of " + IdLimits.MAX_TENANT_ID_LENGTH);
    }
}
