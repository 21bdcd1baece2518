package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.ItemAdded;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.conformance.Fixtures.OrderShipped;
import dev.ferret.runtime.testing.TestDatabase;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Inline projections run inside the appending transaction; the envelopes they see carry the sequence numbers the
 * events are stored under, the same ones a later read of the stream returns.
 */
@Tag("conformance")
class InlineSequenceConformanceTest {

    /** Records every envelope it is handed, in the order it is handed them. */
    static final class Recorder extends EventProjection {

        final List<EventEnvelope> seen = Collections.synchronizedList(new ArrayList<>());

        Recorder() {
            super("Recorder");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            seen.add(event);
        }
    }

    /** What identifies a stored event: its sequence, id, stream and version. */
    private record Stored(long sequence, String eventId, String streamId, long version) {

        static Stored of(EventEnvelope e) {
            return new Stored(e.sequence(), e.eventId().toString(), e.streamId(), e.version());
        }
    }

    @Test
    void inlineProjectionsSeeTheSequenceNumbersTheirEventsAreStoredUnder() {
        try (TestDatabase db = TestDatabase.create("inlineseq")) {
            Recorder recorder = new Recorder();
            StoreOptions options = db.options();
            options.projections().add(recorder, Lifecycle.INLINE);
            try (DocumentStore store = Ferret.createStore(options)) {
                List<String> streams = appendAcrossTwoSaves(store, StoreOptions.DEFAULT_TENANT);
                assertSeenAsStored(store, StoreOptions.DEFAULT_TENANT, streams, recorder);
            }
        }
    }

    @Test
    void inlineProjectionsSeeStoredSequenceNumbersWithTenantPartitionedEventsWhoseTenantNumbersStayGapFree() {
        try (TestDatabase db = TestDatabase.create("inlineseqtenant")) {
            Recorder recorder = new Recorder();
            StoreOptions options = db.options();
            options.events().partitionByTenant(true);
            options.projections().add(recorder, Lifecycle.INLINE);
            try (DocumentStore store = Ferret.createStore(options)) {
                List<String> red = appendAcrossTwoSaves(store, "red");
                assertSeenAsStored(store, "red", red, recorder);
                recorder.seen.clear();
                List<String> blue = appendAcrossTwoSaves(store, "blue");
                assertSeenAsStored(store, "blue", blue, recorder);
            }
            for (String tenant : List.of("red", "blue")) {
                String where = " FROM " + db.table("pc_events") + " WHERE tenant_id = '" + tenant + "'";
                assertThat(db.queryLong("SELECT MIN(tenant_seq)" + where)).isEqualTo(1);
                assertThat(db.queryLong("SELECT MAX(tenant_seq)" + where))
                        .isEqualTo(db.queryLong("SELECT COUNT(DISTINCT tenant_seq)" + where)).isEqualTo(6);
            }
        }
    }

    /** Six events: one save of two streams, then one save appending to the first and starting a third. */
    private static List<String> appendAcrossTwoSaves(DocumentStore store, String tenant) {
        String first = Fixtures.newStreamId();
        String second = Fixtures.newStreamId();
        String third = Fixtures.newStreamId();
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(first, new OrderPlaced("o1", "ann", 1), new ItemAdded("sku", 2, List.of()));
            session.events().append(second, new OrderPlaced("o2", "bob", 2));
            session.saveChanges();
        }
        try (DocumentSession session = store.openSession(tenant)) {
            session.events().append(first, 2, List.of(new OrderShipped("o1", "dhl")));
            session.events().append(third, new OrderPlaced("o3", "cy", 3), new OrderShipped("o3", "ups"));
            session.saveChanges();
        }
        return List.of(first, second, third);
    }

    private static void assertSeenAsStored(DocumentStore store, String tenant, List<String> streams,
                                           Recorder recorder) {
        List<Stored> stored = streams.stream().flatMap(s -> store.querySession(tenant).fetchStream(s).stream())
                .map(Stored::of).toList();
        List<Stored> seen = recorder.seen.stream().map(Stored::of).toList();
        assertThat(stored).hasSize(6);
        assertThat(seen).containsExactlyInAnyOrderElementsOf(stored);
        assertThat(seen).extracting(Stored::sequence).allSatisfy(sequence -> assertThat(sequence).isPositive())
                .isSorted().doesNotHaveDuplicates();
        // in append order: the first save's two streams, then the second save's two
        assertThat(seen).extracting(Stored::streamId, Stored::version).containsExactly(
                tuple(streams.get(0), 1L), tuple(streams.get(0), 2L), tuple(streams.get(1), 1L),
                tuple(streams.get(0), 3L), tuple(streams.get(2), 1L), tuple(streams.get(2), 2L));
    }
}
