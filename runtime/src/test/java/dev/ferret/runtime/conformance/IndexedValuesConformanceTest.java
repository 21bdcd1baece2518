package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.Filter;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Values in indexed and queried paths as JSON-B writes them: doubles in exponent form, instants with nine fractional
 * digits and offsets other than Z compare by value on every engine (indexed and not), and a value an index cannot hold
 * on the engine is refused at save naming the index, with nothing of the unit of work written.
 */
@Tag("conformance")
class IndexedValuesConformanceTest {

    public record Reading(String id, double amount, double plainAmount, Instant at, OffsetDateTime localAt,
                          Instant plainAt) {
    }

    public record Note(String id, String title) {
    }

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    private DocumentStore store(TestDatabase db) {
        StoreOptions options = db.options();
        options.documents().register(Reading.class).register(Note.class)
                .index(Reading.class, "amount")
                .index(Reading.class, "at")
                .index(Reading.class, "localAt")
                .index(Note.class, "title");
        options.events().register(Noted.class);
        return resources.add(Ferret.createStore(options));
    }

    public record Noted(String id) {
    }

    private static Reading reading(String id, double amount, String at) {
        Instant instant = Instant.parse(at);
        return new Reading(id, amount, amount, instant, instant.atOffset(ZoneOffset.ofHours(2)), instant);
    }

    @Test
    void doublesInExponentFormAndInstantsWithNanosAndOffsetsCompareByValueIndexedOrNot() {
        DocumentStore store = store(resources.database("values"));
        try (DocumentSession session = store.openSession()) {
            // JSON-B writes 1.25E7, 3.5E8 and 9.5E-4 in exponent form, 12.5 and 0.5 plain
            session.store(reading("big", 1.25e7, "2026-03-01T10:00:00.123456789Z"),
                    reading("bigger", 3.5e8, "2026-03-01T10:00:00.123456790Z"),
                    reading("tiny", 9.5e-4, "2026-03-01T09:59:59Z"),
                    reading("small", 12.5, "2026-03-01T10:00:00.1Z"),
                    reading("half", 0.5, "2026-03-01T10:00:01Z"));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            for (String path : List.of("amount", "plainAmount")) {
                assertThat(session.query(Reading.class).where(Filter.gt(path, 1_000_000)).orderBy(path).toList())
                        .as(path).extracting(Reading::id).containsExactly("big", "bigger");
                assertThat(session.query(Reading.class).where(Filter.lt(path, 0.001)).toList())
                        .as(path).extracting(Reading::id).containsExactly("tiny");
                assertThat(session.query(Reading.class).where(Filter.eq(path, 12_500_000)).toList())
                        .as(path).extracting(Reading::id).containsExactly("big");
                assertThat(session.query(Reading.class).orderBy(path).toList())
                        .as(path).extracting(Reading::id).containsExactly("tiny", "half", "small", "big", "bigger");
            }
            Instant from = Instant.parse("2026-03-01T10:00:00.05Z");
            for (String path : List.of("at", "localAt", "plainAt")) {
                // +02:00 and Z name the same instants; nine fractional digits are read, not dropped
                assertThat(session.query(Reading.class).where(Filter.gt(path, from))
                        .where(Filter.lt(path, Instant.parse("2026-03-01T10:00:00.9Z"))).orderBy(path).toList())
                        .as(path).extracting(Reading::id).containsExactly("small", "big", "bigger");
                assertThat(session.query(Reading.class).where(Filter.gt(path,
                        Instant.parse("2026-03-01T10:00:00.1234Z").atOffset(ZoneOffset.ofHours(-5)))).toList())
                        .as(path).extracting(Reading::id).containsExactlyInAnyOrder("big", "bigger", "half");
            }
        }
    }

    @Test
    void aTextValueTheIndexCannotHoldIsRefusedAtSaveNamingTheIndexAndNothingOfTheUnitOfWorkIsWritten() {
        TestDatabase db = resources.database("keylimit");
        DocumentStore store = store(db);
        // past SQL Server's 1,700 bytes (2 a character) and PostgreSQL's 2,640 bytes of UTF-8 (3 a euro sign)
        String tooLong = "\u20ac".repeat(1_000);
        try (DocumentSession session = store.openSession()) {
            session.store(new Note("fits", "x".repeat(800)));
            session.store(new Note("long", tooLong));
            session.events().append("notes", new Noted("long"));
            if (db.engine() == DatabaseEngine.H2) {
                session.saveChanges();
            } else {
                assertThatThrownBy(session::saveChanges).satisfies(e -> assertThat(messages(e))
                        .contains("ix_pc_doc_note_title", "'long'", "cannot hold it")
                        .contains(db.engine() == DatabaseEngine.POSTGRESQL ? "at most 2640" : "at most 1700")
                        .doesNotContain(tooLong.substring(0, 20)));
            }
        }
        try (QuerySession session = store.querySession()) {
            if (db.engine() == DatabaseEngine.H2) {
                assertThat(session.query(Note.class).where(Filter.eq("title", tooLong)).toList())
                        .extracting(Note::id).containsExactly("long");
            } else {
                assertThat(session.query(Note.class).count()).isZero();
                assertThat(session.fetchStreamState("notes")).isEmpty();
            }
        }
        // a value that fits is written, on every engine
        try (DocumentSession session = store.openSession()) {
            session.store(new Note("short", "\u20ac".repeat(400)));
            session.saveChanges();
        }
        try (QuerySession session = store.querySession()) {
            assertThat(session.query(Note.class).where(Filter.eq("title", "\u20ac".repeat(400))).toList())
                    .extracting(Note::id).containsExactly("short");
        }
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }
}
