package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A unit of work costs a constant number of statements however many streams it appends to, on every engine (arrays
 * on PostgreSQL and H2, one JSON parameter read by OPENJSON on SQL Server): every stream row, then every event, then
 * the ownership of their sequence numbers. Counted as the statements the session prepares, each of which
 * runs once (a JDBC batch counts once).
 */
@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AppendStatementsConformanceTest {

    private final TestResources resources = new TestResources();
    private final AtomicInteger prepared = new AtomicInteger();
    private TestDatabase db;
    private DocumentStore store;

    @BeforeAll
    void start() {
        db = resources.database("appendstatements");
        FlakyDataSource counted = new FlakyDataSource(db.dataSource());
        // the session's own statements: not the commit signal another thread sends after the commit (PostgreSQL)
        Thread session = Thread.currentThread();
        counted.observeStatements(sql -> {
            if (Thread.currentThread() == session) {
                prepared.incrementAndGet();
            }
        });
        store = resources.add(Ferret.createStore(db.options().dataSource(counted)));
    }

    @AfterAll
    void stop() throws Exception {
        resources.close();
    }

    @Test
    void aUnitOfWorkOfManyStreamsCostsAsManyStatementsAsOneOfAFew() {
        int few = statementsToAppend(streams(5), 2);
        int many = statementsToAppend(streams(300), 2);
        assertThat(many).as("statements for 300 streams").isEqualTo(few).isLessThanOrEqualTo(4);
    }

    @Test
    void newStreamsExpectedVersionsAndAnyVersionInOneUnitOfWorkCostAConstantNumberOfStatements() {
        List<String> existing = streams(40);
        statementsToAppend(existing, 1);
        int mixed = countStatements(() -> {
            try (DocumentSession session = store.openSession()) {
                for (int i = 0; i < 40; i++) {
                    session.events().startStream(Fixtures.newStreamId(), Object.class,
                            List.of(new OrderPlaced("n" + i, "new", i)));
                    session.events().append(existing.get(i), 1, List.of(new OrderShipped("e" + i, "dhl")));
                    session.events().append(Fixtures.newStreamId(), new OrderPlaced("a" + i, "any", i));
                }
                session.saveChanges();
            }
        });
        assertThat(mixed).as("an upsert, an insert batch, an update batch, the events, their ownership")
                .isLessThanOrEqualTo(6);
        for (String stream : existing) {
            List<EventEnvelope> events = store.querySession().fetchStream(stream);
            assertThat(events).extracting(EventEnvelope::version).containsExactly(1L, 2L);
            assertThat(events.get(1).data()).isInstanceOf(OrderShipped.class);
        }
    }

    @Test
    void eachStreamGetsItsOwnVersionsAndTheEventsTheirCallOrder() {
        List<String> streams = streams(30);
        statementsToAppend(streams, 2);
        statementsToAppend(streams, 3);
        List<Long> sequences = new ArrayList<>();
        for (String stream : streams) {
            List<EventEnvelope> events = store.querySession().fetchStream(stream);
            assertThat(events).extracting(EventEnvelope::version).containsExactly(1L, 2L, 3L, 4L, 5L);
            // numbered in version order: a stream's events reach a shard in the order they were appended
            assertThat(events).extracting(EventEnvelope::sequence).isSorted().doesNotHaveDuplicates();
            sequences.add(events.get(4).sequence());
        }
        // the second unit of work wrote its streams' events in the order it appended them
        assertThat(sequences).isSorted();
    }

    @Test
    void aUnitOfWorkOfMoreEventsThanOneArrayParameterHoldsIsWrittenWholeAndInOrder() {
        List<String> streams = streams(2);
        int statements = statementsToAppend(streams, 5_100);
        for (String stream : streams) {
            List<EventEnvelope> events = store.querySession().fetchStream(stream);
            assertThat(events).hasSize(5_100);
            assertThat(events).extracting(EventEnvelope::sequence).isSorted().doesNotHaveDuplicates();
            assertThat(((OrderPlaced) events.get(5_099).data()).amount()).isEqualTo(5_099);
        }
        // 10,200 events: two statements of at most 10,000 rows each, one prepared statement
        assertThat(statements).isLessThanOrEqualTo(4);
    }

    @Test
    void anExpectedVersionThatMovedRefusesTheUnitOfWorkNamingItsStreamAndSavesNothing() {
        List<String> streams = streams(10);
        statementsToAppend(streams, 1);
        String fresh = Fixtures.newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(fresh, new OrderPlaced("f", "fresh", 1));
            for (int i = 0; i < streams.size(); i++) {
                // the seventh expects a version its stream never had
                session.events().append(streams.get(i), i == 6 ? 5 : 1, List.of(new OrderShipped("x" + i, "ups")));
            }
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class)
                    .hasMessageContaining(streams.get(6)).hasMessageContaining("expected version 5");
        }
        assertThat(store.querySession().fetchStream(fresh)).isEmpty();
        assertThat(store.querySession().fetchStream(streams.get(0))).hasSize(1);
    }

    @Test
    void startingAStreamThatExistsRefusesTheUnitOfWorkNamingThatStream() {
        List<String> streams = streams(8);
        statementsToAppend(streams.subList(3, 4), 1);
        try (DocumentSession session = store.openSession()) {
            for (String stream : streams) {
                session.events().startStream(stream, Object.class, List.of(new OrderPlaced("s", "start", 1)));
            }
            ConcurrencyException refused = catchThrowableOfType(ConcurrencyException.class, session::saveChanges);
            assertThat(refused).isNotNull();
            assertThat(refused.getMessage()).contains(streams.get(3)).contains("already exists");
        }
        assertThat(store.querySession().fetchStream(streams.get(0))).isEmpty();
    }

    private int statementsToAppend(List<String> streams, int eventsEach) {
        return countStatements(() -> {
            try (DocumentSession session = store.openSession()) {
                for (String stream : streams) {
                    List<Object> events = new ArrayList<>();
                    for (int e = 0; e < eventsEach; e++) {
                        events.add(new OrderPlaced(stream, "c", e));
                    }
                    session.events().append(stream, events);
                }
                session.saveChanges();
            }
        });
    }

    private int countStatements(Runnable unitOfWork) {
        int before = prepared.get();
        unitOfWork.run();
        return prepared.get() - before;
    }

    private static List<String> streams(int n) {
        List<String> streams = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            streams.add(Fixtures.newStreamId());
        }
        return streams;
    }
}
