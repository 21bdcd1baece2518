package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.StreamForWriting;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.conformance.Fixtures.ItemAdded;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.testing.MutableClock;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;

/**
 * A stream folded on demand with the snapshot definition the daemon uses, now, as of a version and as of a time,
 * storing nothing; and the command-handler pattern: fetch a stream's state and version, append at that version, and
 * lose to a writer who appended in between.
 */
@Tag("conformance")
class LiveAggregationConformanceTest {

    /** What an order's events make of it. */
    public record Order(String id, String customer, int amount, int items, boolean shipped) {
    }

    private final TestResources resources = new TestResources();
    private final MutableClock clock = new MutableClock(Instant.parse("2026-06-01T10:00:00Z"));

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    @Test
    void aStreamIsFoldedOnDemandNowAsOfAVersionAndAsOfATimeAndNothingIsStored() {
        TestDatabase db = resources.database("liveagg");
        DocumentStore store = open(db, Lifecycle.ASYNC);
        String stream = Fixtures.newStreamId();
        append(store, stream, new OrderPlaced(stream, "ann", 100), new ItemAdded("sku-1", 2, List.of()));
        Instant afterFirstSave = clock.instant();
        clock.advance(Duration.ofMinutes(5));
        append(store, stream, new ItemAdded("sku-2", 1, List.of()), new OrderShipped(stream, "dhl"));

        try (var session = store.querySession()) {
            assertThat(session.aggregateStream(Order.class, stream)).contains(new Order(stream, "ann", 100, 2, true));
            assertThat(session.aggregateStream(Order.class, stream, 2)).contains(new Order(stream, "ann", 100, 1, false));
            assertThat(session.aggregateStream(Order.class, stream, afterFirstSave))
                    .contains(new Order(stream, "ann", 100, 1, false));
            assertThat(session.aggregateStream(Order.class, stream, afterFirstSave.minusSeconds(1))).isEmpty();
            assertThat(session.aggregateStream(Order.class, Fixtures.newStreamId())).isEmpty();
            assertThat(session.load(Order.class, stream)).as("the async daemon is off: nothing stored it").isEmpty();
        }
        assertThatThrownBy(() -> store.querySession().aggregateStream(OrderShipped.class, stream))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(OrderShipped.class.getName());
    }

    @Test
    void fetchForWritingAppendsAtTheFetchedVersionAndLosesToAWriterInBetween() {
        TestDatabase db = resources.database("fetchwrite");
        DocumentStore store = open(db, Lifecycle.ASYNC);
        String stream = Fixtures.newStreamId();

        try (DocumentSession session = store.openSession()) {
            StreamForWriting<Order> fresh = session.fetchForWriting(Order.class, stream);
            assertThat(fresh.version()).isZero();
            assertThat(fresh.aggregate()).isEmpty();
            fresh.append(new OrderPlaced(stream, "bob", 40));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession()) {
            StreamForWriting<Order> order = session.fetchForWriting(Order.class, stream);
            assertThat(order.version()).isEqualTo(1);
            assertThat(order.aggregate()).contains(new Order(stream, "bob", 40, 0, false));
            order.append(new ItemAdded("sku-1", 1, List.of()));

            append(store, stream, new ItemAdded("sku-9", 9, List.of())); // another writer, in between
            assertThatThrownBy(session::saveChanges).isInstanceOf(ConcurrencyException.class)
                    .hasMessageContaining(stream);
        }
        try (DocumentSession session = store.openSession()) {
            StreamForWriting<Order> again = session.fetchForWriting(Order.class, stream);
            assertThat(again.version()).isEqualTo(2);
            again.append(new OrderShipped(stream, "ups"));
            session.saveChanges();
        }
        assertThat(store.querySession().aggregateStream(Order.class, stream))
                .contains(new Order(stream, "bob", 40, 1, true));

        // two writers starting the same new stream: one wins
        String contested = Fixtures.newStreamId();
        try (DocumentSession first = store.openSession(); DocumentSession second = store.openSession()) {
            first.fetchForWriting(Order.class, contested).append(new OrderPlaced(contested, "cy", 1));
            second.fetchForWriting(Order.class, contested).append(new OrderPlaced(contested, "di", 2));
            first.saveChanges();
            assertThatThrownBy(second::saveChanges).isInstanceOf(ConcurrencyException.class);
        }
    }

    @Test
    void withAnInlineSnapshotFetchForWritingReadsTheStoredSnapshotAtTheStreamsVersion() {
        TestDatabase db = resources.database("fetchinline");
        DocumentStore store = open(db, Lifecycle.INLINE);
        String stream = Fixtures.newStreamId();
        append(store, stream, new OrderPlaced(stream, "eve", 7), new ItemAdded("sku-1", 3, List.of()));
        try (DocumentSession session = store.openSession()) {
            StreamForWriting<Order> order = session.fetchForWriting(Order.class, stream);
            assertThat(order.version()).isEqualTo(2);
            assertThat(order.aggregate()).contains(new Order(stream, "eve", 7, 1, false))
                    .isEqualTo(session.load(Order.class, stream));
            order.append(new OrderShipped(stream, "dhl"));
            session.saveChanges();
        }
        assertThat(store.querySession().load(Order.class, stream)).contains(new Order(stream, "eve", 7, 1, true));
    }

    @Test
    void withAnAsyncSnapshotThatPassedTheStreamFetchForWritingReadsItAndFoldsTheEventsOtherwise() {
        for (boolean partitioned : List.of(false, true)) {
            TestDatabase db = resources.database(partitioned ? "fetchasynct" : "fetchasync");
            String tenant = partitioned ? "acme" : StoreOptions.DEFAULT_TENANT;
            DocumentStore store = open(db, Lifecycle.ASYNC, DaemonMode.SOLO, partitioned);
            String stream = Fixtures.newStreamId();
            try (DocumentSession session = store.openSession(tenant)) {
                session.events().append(stream, new OrderPlaced(stream, "eve", 7), new ItemAdded("sku-1", 3, List.of()));
                session.saveChanges();
            }
            store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
            // a stored state no fold of the events gives: only reading the snapshot returns it
            Order stored = new Order(stream, "from the snapshot", 7, 1, false);
            try (DocumentSession session = store.openSession(tenant)) {
                session.store(stored);
                session.saveChanges();
            }
            try (DocumentSession session = store.openSession(tenant)) {
                StreamForWriting<Order> order = session.fetchForWriting(Order.class, stream);
                assertThat(order.version()).as("partitioned %s", partitioned).isEqualTo(2);
                assertThat(order.aggregate()).as("partitioned %s", partitioned).contains(stored);
            }

            // the shard does not see the third event (no daemon runs any more): the events are folded
            store.close();
            DocumentStore behind = open(db, Lifecycle.ASYNC, DaemonMode.DISABLED, partitioned);
            try (DocumentSession session = behind.openSession(tenant)) {
                session.events().append(stream, new OrderShipped(stream, "dhl"));
                session.saveChanges();
            }
            try (DocumentSession session = behind.openSession(tenant)) {
                StreamForWriting<Order> order = session.fetchForWriting(Order.class, stream);
                assertThat(order.version()).isEqualTo(3);
                assertThat(order.aggregate()).as("partitioned %s", partitioned)
                        .contains(new Order(stream, "eve", 7, 1, true));
            }
        }
    }

    private DocumentStore open(TestDatabase db, Lifecycle lifecycle) {
        return open(db, lifecycle, null, false);
    }

    private DocumentStore open(TestDatabase db, Lifecycle lifecycle, DaemonMode mode, boolean partitioned) {
        StoreOptions options = db.options();
        if (mode != null) {
            options.daemon().mode(mode).pollingInterval(Duration.ofMillis(50));
        }
        options.events().partitionByTenant(partitioned);
        options.projections().snapshot(Order.class, lifecycle, s -> s
                .create(OrderPlaced.class, (id, e) -> new Order(id, e.customer(), e.amount(), 0, false))
                .apply(ItemAdded.class, (o, e) -> new Order(o.id(), o.customer(), o.amount(), o.items() + 1, o.shipped()))
                .apply(OrderShipped.class, (o, e) -> new Order(o.id(), o.customer(), o.amount(), o.items(), true)));
        return resources.add(Ferret.createStore(options, StoreSeams.defaults().withClock(clock)));
    }

    private static void append(DocumentStore store, String stream, Object... events) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, events);
            session.saveChanges();
        }
    }
}
