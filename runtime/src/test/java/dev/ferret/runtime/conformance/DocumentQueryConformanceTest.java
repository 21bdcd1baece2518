package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DocumentQuery;
import dev.ferret.DocumentSession;
import jakarta.json.bind.annotation.JsonbProperty;
import java.util.Map;
import dev.ferret.ConfigurationException;
import dev.ferret.DocumentStore;
import dev.ferret.Filter;
import dev.ferret.QuerySession;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Typed filters on nested properties, ordering, paging by offset and by keyset, and the single-result forms, over
 * documents whose values would sort wrongly as text (9 and 10, 2 and 10.5, instants across offsets).
 */
@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DocumentQueryConformanceTest {

    public record Address(String city, String zip) {
    }

    public record Buyer(String name, Address address) {
    }

    public record Sale(String id, String status, int quantity, BigDecimal total, Instant placedAt, Buyer buyer,
                       String note) {
    }

    private final TestResources resources = new TestResources();
    private DocumentStore store;

    @BeforeAll
    void fill() {
        TestDatabase db = resources.database("queries");
        store = resources.add(Ferret.createStore(db.options().documents().register(Sale.class).and()));
        try (DocumentSession session = store.openSession()) {
            session.store(
                    sale("s1", "open", 9, "2", "2026-01-01T10:00:00Z", "Oslo", null),
                    sale("s2", "open", 10, "10.5", "2026-01-01T09:30:00Z", "Lyon", "50% off"),
                    sale("s3", "closed", 100, "100", "2026-03-01T00:00:00Z", "Oslo", "50_off"),
                    sale("s4", "open", 2, "7", "2026-02-01T00:00:00Z", null, "5"),
                    sale("s5", "void", 10, "10.5", "2026-01-15T00:00:00Z", "Bergen", "[x]"));
            session.saveChanges();
        }
        try (DocumentSession other = store.openSession("other-tenant")) {
            other.store(sale("s1", "open", 1, "1", "2026-01-01T00:00:00Z", "Oslo", null));
            other.saveChanges();
        }
    }

    @AfterAll
    void close() throws Exception {
        resources.close();
    }

    private static Sale sale(String id, String status, int quantity, String total, String placedAt, String city,
                             String note) {
        return new Sale(id, status, quantity, new BigDecimal(total), Instant.parse(placedAt),
                city == null ? null : new Buyer("b-" + id, new Address(city, "0" + id)), note);
    }

    private List<String> ids(DocumentQuery<Sale> query) {
        return query.toList().stream().map(Sale::id).toList();
    }

    private DocumentQuery<Sale> query(QuerySession session) {
        return session.query(Sale.class);
    }

    @Test
    void comparisonsUseTheDeclaredTypeSoNumbersAndInstantsCompareAsSuch() {
        try (QuerySession session = store.querySession()) {
            // as text "9" > "10"; as numbers it is not
            assertThat(ids(query(session).where(Filter.lt("quantity", 10)))).containsExactly("s1", "s4");
            assertThat(ids(query(session).where(Filter.ge("total", 10)))).containsExactly("s2", "s3", "s5");
            assertThat(ids(query(session).where(Filter.le("total", new BigDecimal("10.50")))))
                    .containsExactly("s1", "s2", "s4", "s5");
            assertThat(ids(query(session).where(Filter.gt("placedAt", Instant.parse("2026-01-01T09:45:00Z")))))
                    .containsExactly("s1", "s3", "s4", "s5");
            assertThat(ids(query(session).where(Filter.ne("status", "open")))).containsExactly("s3", "s5");
            // the old form, now typed: 10 matches "10" stored as a number
            assertThat(ids(query(session).where("quantity", 10))).containsExactly("s2", "s5");
        }
    }

    @Test
    void nestedPathsInNullChecksPrefixesAndBooleanCombinations() {
        try (QuerySession session = store.querySession()) {
            assertThat(ids(query(session).where(Filter.eq("buyer.address.city", "Oslo")))).containsExactly("s1", "s3");
            assertThat(ids(query(session).where(Filter.in("buyer.address.city", List.of("Lyon", "Bergen")))))
                    .containsExactly("s2", "s5");
            assertThat(ids(query(session).where(Filter.isNull("buyer.address.city")))).containsExactly("s4");
            assertThat(ids(query(session).where(Filter.isNotNull("note")))).containsExactly("s2", "s3", "s4", "s5");
            // LIKE's wildcards in a prefix are plain characters
            assertThat(ids(query(session).where(Filter.startsWith("note", "50%")))).containsExactly("s2");
            assertThat(ids(query(session).where(Filter.startsWith("note", "50_")))).containsExactly("s3");
            assertThat(ids(query(session).where(Filter.startsWith("note", "[")))).containsExactly("s5");
            assertThat(ids(query(session).where(Filter.or(Filter.eq("status", "void"),
                    Filter.and(Filter.eq("status", "open"), Filter.gt("quantity", 9))))))
                    .containsExactly("s2", "s5");
            assertThat(ids(query(session).where(Filter.eq("status", "open")).where(Filter.lt("total", 5))))
                    .containsExactly("s1");
        }
    }

    @Test
    void orderingByTypedKeysThenIdWithLimitAndOffset() {
        try (QuerySession session = store.querySession()) {
            assertThat(ids(query(session).orderBy("total"))).containsExactly("s1", "s4", "s2", "s5", "s3");
            assertThat(ids(query(session).orderByDescending("quantity").orderBy("placedAt")))
                    .containsExactly("s3", "s2", "s5", "s1", "s4");
            assertThat(ids(query(session).orderBy("placedAt").limit(2).offset(1))).containsExactly("s1", "s5");
            assertThat(ids(query(session).orderBy("placedAt").offset(3))).containsExactly("s4", "s3");
        }
    }

    @Test
    void keysetPagingWalksEveryDocumentOnceInOrder() {
        try (QuerySession session = store.querySession()) {
            List<String> seen = new ArrayList<>();
            Sale last = null;
            int pages = 0;
            while (true) {
                DocumentQuery<Sale> page = query(session).orderByDescending("total").orderBy("placedAt").limit(2);
                if (last != null) {
                    page.startAfter(last);
                }
                List<Sale> sales = page.toList();
                if (sales.isEmpty()) {
                    break;
                }
                sales.forEach(s -> seen.add(s.id()));
                last = sales.get(sales.size() - 1);
                pages++;
            }
            // s2 and s5 tie on total and are ordered by placedAt
            assertThat(seen).containsExactly("s3", "s2", "s5", "s4", "s1");
            assertThat(pages).isEqualTo(3);
            Sale noNote = query(session).where("status", "closed").single();
            assertThatThrownBy(() -> query(session).orderBy("buyer.address.city")
                    .startAfter(query(session).where(Filter.isNull("buyer.address.city")).single()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("buyer.address.city");
            assertThat(noNote.id()).isEqualTo("s3");
        }
    }

    @Test
    void countExistsFirstAndSingleStayInTheTenant() {
        try (QuerySession session = store.querySession()) {
            assertThat(query(session).where(Filter.eq("status", "open")).count()).isEqualTo(3);
            assertThat(query(session).where(Filter.eq("status", "nope")).exists()).isFalse();
            assertThat(query(session).where(Filter.eq("status", "void")).exists()).isTrue();
            assertThat(query(session).orderByDescending("placedAt").first()).map(Sale::id).hasValue("s3");
            assertThat(query(session).where(Filter.eq("status", "nope")).first()).isEmpty();
            assertThat(query(session).where(Filter.eq("status", "void")).single().id()).isEqualTo("s5");
            assertThatThrownBy(() -> query(session).where(Filter.eq("status", "open")).single())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("exactly one Sale")
                    .hasMessageContaining("more than one");
            assertThatThrownBy(() -> query(session).where(Filter.eq("status", "nope")).single())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("none");
        }
        try (QuerySession other = store.querySession("other-tenant")) {
            assertThat(query(other).count()).isOne();
            assertThat(query(other).where(Filter.eq("buyer.address.city", "Oslo")).single().quantity()).isEqualTo(1);
        }
    }

    @Test
    void badPathsAndValuesAreRefusedAtTheCallNamingThem() {
        try (QuerySession session = store.querySession()) {
            assertThatThrownBy(() -> query(session).where(Filter.eq("buyer..city", "x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'buyer..city'");
            assertThatThrownBy(() -> query(session).where(Filter.eq("status'; DROP TABLE x; --", "x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DROP TABLE");
            assertThatThrownBy(() -> query(session).orderBy("a.b.c.d.e.f.g.h.i"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("over the limit of 8");
            assertThatThrownBy(() -> query(session).where(Filter.eq("status", null)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("isNull(\"status\")");
            assertThatThrownBy(() -> query(session).where(Filter.lt("quantity", "many")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'quantity' compares as number");
            assertThatThrownBy(() -> query(session).where(Filter.in("status", List.of())))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one value");
            assertThatThrownBy(() -> query(session).limit(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("limit must be 1 or more");
        }
    }

    public record Labelled(String id, @JsonbProperty("label_text") String label, Map<String, Object> extra) {
    }

    @Test
    void aMistypedPathIsRefusedAtTheCallNamingTheNearestPropertyWhereTheClassDeclaresItsProperties() {
        try (QuerySession session = store.querySession()) {
            assertThatThrownBy(() -> session.query(Sale.class).where("stauts", "open"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'stauts'").hasMessageContaining("Sale has no property 'stauts'")
                    .hasMessageContaining("did you mean 'status'?");
            assertThatThrownBy(() -> session.query(Sale.class).where(Filter.eq("buyer.adress.city", "Oslo")))
                    .hasMessageContaining("Buyer has no property 'adress'").hasMessageContaining("'address'");
            assertThatThrownBy(() -> session.query(Sale.class).orderBy("placed"))
                    .hasMessageContaining("Sale has no property 'placed'");
            // what the class declares is taken, nested too
            assertThat(session.query(Sale.class).where(Filter.eq("buyer.address.city", "Oslo")).toList())
                    .extracting(Sale::id).containsExactlyInAnyOrder("s1", "s3");
        }
    }

    @Test
    void jsonbNamesAndMapsAreTakenAsTheJsonHasThem() {
        TestDatabase db = resources.database("jsonbnames");
        DocumentStore labelled = resources.add(Ferret.createStore(db.options().documents()
                .register(Labelled.class).index(Labelled.class, "label_text").and()));
        try (DocumentSession session = labelled.openSession()) {
            session.store(new Labelled("l1", "red", Map.of("size", "XL")));
            session.saveChanges();
        }
        try (QuerySession session = labelled.querySession()) {
            assertThat(session.query(Labelled.class).where("label_text", "red").toList()).hasSize(1);
            // below a map the JSON is not known: any key is a path
            assertThat(session.query(Labelled.class).where("extra.size", "XL").toList()).hasSize(1);
            assertThat(session.query(Labelled.class).where("extra.colour", "XL").toList()).isEmpty();
        }
        // an index on a path the class does not declare fails the start, naming it
        assertThatThrownBy(() -> Ferret.createStore(resources.database("badindex").options().documents()
                .register(Labelled.class).index(Labelled.class, "lable_text").and()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("Labelled has no property 'lable_text'")
                .hasMessageContaining("did you mean 'label_text'?");
    }
}
