package dev.ferret.runtime.conformance;

import static dev.ferret.runtime.conformance.Fixtures.newStreamId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StreamState;
import dev.ferret.UnknownEventTypeException;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.ItemAdded;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@Tag("conformance")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventStoreConformanceTest {

    private TestDatabase db;
    private DocumentStore store;

    @BeforeAll
    void start() {
        db = TestDatabase.create("events");
        store = Ferret.createStore(db.options()
                .documents().register(Customer.class).and()
                .events().register(ItemAdded.class, "item_added").register(Priority.class).and());
    }

    /** Serializes to a bare JSON string, which SQL Server's ISJSON would refuse. */
    public enum Priority { HIGH, LOW }

    @AfterAll
    void stop() {
        if (store != null) {
            store.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @Test
    void anEventThatSerializesToAJsonScalarIsRefusedOnEveryEngineAndNothingIsWritten() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o1", "alice", 120), Priority.HIGH);
            assertThatThrownBy(session::saveChanges).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(Priority.class.getName()).hasMessageContaining("JSON scalar");
        }
        assertThat(store.querySession().fetchStream(stream)).isEmpty();
    }

    @Test
    void appendedEventsReadBackInOrderWithTheirMetadata() {
        String stream = newStreamId();
        OffsetDateTime before = OffsetDateTime.now().minusSeconds(5);
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o1", "alice", 120),
                    new ItemAdded("sku-1", 2, List.of("red", "large")));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderShipped("o1", "dhl"));
            session.saveChanges();
        }

        List<EventEnvelope> events = store.querySession().fetchStream(stream);

        assertThat(events).extracting(EventEnvelope::version).containsExactly(1L, 2L, 3L);
        assertThat(events).extracting(EventEnvelope::typeName)
                .containsExactly("OrderPlaced", "item_added", "OrderShipped");
        assertThat(events).extracting(EventEnvelope::data).containsExactly(new OrderPlaced("o1", "alice", 120),
                new ItemAdded("sku-1", 2, List.of("red", "large")), new OrderShipped("o1", "dhl"));
        assertThat(events).extracting(EventEnvelope::sequence).isSorted().doesNotHaveDuplicates();
        assertThat(events).allSatisfy(e -> {
            assertThat(e.streamId()).isEqualTo(stream);
            assertThat(e.tenantId()).isEqualTo("*DEFAULT*");
            assertThat(e.timestamp()).isAfter(before);
        });
        assertThat(events).extracting(EventEnvelope::eventId).doesNotHaveDuplicates();

        StreamState state = store.querySession().fetchStreamState(stream).orElseThrow();
        assertThat(state.version()).isEqualTo(3);
        assertThat(store.querySession().fetchStreamState(newStreamId())).isEmpty();
        assertThat(store.querySession().fetchStream(newStreamId())).isEmpty();
    }

    @Test
    void expectedVersionThatHoldsAppends() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().startStream(stream, Customer.class, List.of(new OrderPlaced("o2", "bob", 5)));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, 1, List.of(new OrderShipped("o2", "ups"), new OrderShipped("o2", "ups")));
            session.saveChanges();
        }
        StreamState state = store.querySession().fetchStreamState(stream).orElseThrow();
        assertThat(state.version()).isEqualTo(3);
        assertThat(state.aggregateType()).isEqualTo("Customer");
    }

    @Test
    void theExpectedVersionHabitAppendIdVersionEventDoesWhatItSays() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            // 0: the stream must not exist yet
            session.events().append(stream, 0, new OrderPlaced("o7", "eve", 1));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, 1L, new OrderShipped("o7", "ups"), new OrderShipped("o7", "dhl"));
            session.saveChanges();
        }
        assertThat(store.querySession().fetchStreamState(stream).orElseThrow().version()).isEqualTo(3);
        assertThat(store.querySession().fetchStream(stream)).hasSize(3)
                .allSatisfy(event -> assertThat(event.data()).isNotInstanceOf(Number.class));
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, 1, new OrderShipped("o7", "late"));
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class)
                    .hasMessageContaining("expected version 1").hasMessageContaining("found version 3");
        }
        try (DocumentSession session = store.openSession()) {
            assertThatThrownBy(() -> session.events().append(stream, 3))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no event");
        }
        assertThat(store.querySession().fetchStreamState(stream).orElseThrow().version()).isEqualTo(3);
    }

    @Test
    void wrongExpectedVersionThrowsAndWritesNothingOfTheUnitOfWork() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o3", "carol", 1));
            session.saveChanges();
        }
        String other = newStreamId();
        long eventsBefore = countEvents();
        try (DocumentSession session = store.openSession()) {
            session.events().append(other, new OrderPlaced("o4", "dave", 1));
            session.store(new Customer("c-conflict", "Dave", "Active", 1, false));
            session.events().append(stream, 5, List.of(new OrderShipped("o3", "fedex")));
            assertThatThrownBy(session::saveChanges)
                    .isInstanceOf(ConcurrencyException.class)
                    .hasMessageContaining(stream)
                    .hasMessageContaining("expected version 5")
                    .satisfies(e -> assertThat(((ConcurrencyException) e).streamId()).isEqualTo(stream));
        }
        assertThat(countEvents()).isEqualTo(eventsBefore);
        assertThat(store.querySession().fetchStream(other)).isEmpty();
        assertThat(store.querySession().load(Customer.class, "c-conflict")).isEmpty();
        assertThat(store.querySession().fetchStreamState(stream).orElseThrow().version()).isEqualTo(1);
    }

    @Test
    void startingAnExistingStreamIsAConflict() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().startStream(stream, Customer.class, List.of(new OrderPlaced("o5", "erin", 1)));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            session.events().startStream(stream, Customer.class, List.of(new OrderPlaced("o5", "erin", 2)));
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class)
                    .hasMessageContaining("already exists");
        }
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, 0, List.of(new OrderPlaced("o5", "erin", 3)));
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class);
        }
        assertThat(store.querySession().fetchStream(stream)).hasSize(1);
    }

    @Test
    void twoWritersRacingOnOneStreamLeaveOneWinnerAndOneConflict() throws Exception {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o6", "frank", 1));
            session.saveChanges();
        }
        int writers = 4;
        CyclicBarrier barrier = new CyclicBarrier(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<CompletableFuture<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                int writer = i;
                results.add(CompletableFuture.supplyAsync(() -> {
                    try (DocumentSession session = store.openSession()) {
                        session.events().append(stream, 1, List.of(new OrderShipped("o6", "writer-" + writer)));
                        barrier.await(30, TimeUnit.SECONDS);
                        session.saveChanges();
                        return true;
                    } catch (ConcurrencyException e) {
                        return false;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            List<Boolean> outcomes = new ArrayList<>();
            for (CompletableFuture<Boolean> result : results) {
                outcomes.add(result.get(60, TimeUnit.SECONDS));
            }
            assertThat(outcomes).containsOnlyOnce(true);
        } finally {
            pool.shutdownNow();
        }
        assertThat(store.querySession().fetchStream(stream)).extracting(EventEnvelope::version)
                .containsExactly(1L, 2L);
    }

    @Test
    void appendsWithoutExpectationFromManyWritersAllLandWithConsecutiveVersions() throws Exception {
        String stream = newStreamId();
        int writers = 4;
        int appendsEach = 10;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                done.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < appendsEach; i++) {
                        try (DocumentSession session = store.openSession()) {
                            session.events().append(stream, new OrderShipped("o7", "x"));
                            saveRetryingCreationRace(session);
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        List<EventEnvelope> events = store.querySession().fetchStream(stream);
        assertThat(events).hasSize(writers * appendsEach);
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).version()).isEqualTo(i + 1);
        }
    }

    /** The only conflict an unconditional append may see is two writers creating the stream at once. */
    private static void saveRetryingCreationRace(DocumentSession session) {
        try {
            session.saveChanges();
        } catch (ConcurrencyException e) {
            session.saveChanges();
        }
    }

    /**
     * Every stream row of a unit of work is written before any of its events: a unit of work refused for a stream's
     * version draws no sequence number, so it leaves no hole for the high water mark to wait on. (Holes left by
     * transactions that roll back after their inserts are the daemon suite's subject.)
     */
    @Test
    void aUnitOfWorkRefusedForAStreamVersionDrawsNoSequenceNumber() {
        String first = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(first, new OrderPlaced("o8", "gina", 1));
            session.saveChanges();
        }
        long sequenceBefore = store.querySession().fetchStream(first).get(0).sequence();

        String refused = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(refused, new OrderPlaced("o9", "hank", 1), new OrderPlaced("o9", "hank", 2));
            session.events().append(newStreamId(), 3, List.of(new OrderShipped("o9", "never")));
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class);
        }
        String after = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(after, new OrderPlaced("o10", "ivy", 1));
            session.saveChanges();
        }

        assertThat(store.querySession().fetchStream(refused)).isEmpty();
        assertThat(store.querySession().fetchStream(after).get(0).sequence()).isEqualTo(sequenceBefore + 1);
    }

    @Test
    void unknownEventTypeOnReadNamesTheTypeAndTheSequence() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, new OrderPlaced("o11", "jack", 1));
            session.saveChanges();
        }
        long sequence = store.querySession().fetchStream(stream).get(0).sequence();
        // a second node that never registered OrderPlaced nor appended one
        try (DocumentStore stranger = Ferret.createStore(db.options().applyAllDatabaseChangesOnStartup(false))) {
            assertThatThrownBy(() -> stranger.querySession().fetchStream(stream))
                    .isInstanceOf(UnknownEventTypeException.class)
                    .hasMessageContaining("'OrderPlaced'")
                    .hasMessageContaining("sequence " + sequence)
                    .satisfies(e -> {
                        assertThat(((UnknownEventTypeException) e).typeName()).isEqualTo("OrderPlaced");
                        assertThat(((UnknownEventTypeException) e).sequence()).isEqualTo(sequence);
                    });
        }
    }

    @Test
    void nullOrEmptyEventListsAreRejectedAtTheCall() {
        try (DocumentSession session = store.openSession()) {
            assertThatThrownBy(() -> session.events().append("s", List.of()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'s'")
                    .hasMessageContaining("must not be null or empty");
            assertThatThrownBy(() -> session.events().append("s", (List<?>) null))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> session.events().append("s", (Object[]) null))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> session.events().append("s", new Object[] {null}))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("event 0");
            assertThatThrownBy(() -> session.events().append("s", 0, List.of()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> session.events().append("", new OrderPlaced("x", "y", 1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stream id");
            assertThatThrownBy(() -> session.events().append("s", -2, List.of(new OrderPlaced("x", "y", 1))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-2");
            session.saveChanges();
        }
    }

    @Test
    void tenantsSeeOnlyTheirOwnStreams() {
        String stream = newStreamId();
        try (DocumentSession session = store.openSession("tenant-a")) {
            session.events().append(stream, new OrderPlaced("o12", "kim", 1));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession("tenant-b")) {
            session.events().append(stream, new OrderPlaced("o12", "lee", 2), new OrderPlaced("o12", "lee", 3));
            session.saveChanges();
        }
        assertThat(store.querySession("tenant-a").fetchStream(stream)).hasSize(1)
                .allSatisfy(e -> assertThat(e.tenantId()).isEqualTo("tenant-a"));
        assertThat(store.querySession("tenant-b").fetchStream(stream)).hasSize(2);
        assertThat(store.querySession().fetchStream(stream)).isEmpty();
    }

    private long countEvents() {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events"));
    }
}
