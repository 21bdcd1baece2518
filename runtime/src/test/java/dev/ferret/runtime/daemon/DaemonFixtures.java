package dev.ferret.runtime.daemon;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Events, documents and projections the daemon suite runs. */
public final class DaemonFixtures {

    private DaemonFixtures() {
    }

    public record Tick(int n) {
    }

    /** Holds its append transaction open until the latch named {@code latch} opens (see {@link Holder}). */
    public record Hold(String latch) {
    }

    /**
     * A {@link Hold} that the inline {@link Holder} refuses at once: its append's transaction rolls back after its
     * event rows drew their sequence numbers, leaving a hole with no owner once it has ended.
     */
    public static final Hold VETO = new Hold("veto: roll the append back");

    public record Poison(String why) {
    }

    /** Counts the events applied per stream: a double apply or a loss shows as a wrong count. */
    public record Tally(String id, long count, long lastTick) {
    }

    public static final Map<String, CountDownLatch> LATCHES = new ConcurrentHashMap<>();

    /**
     * Opened by {@link Holder} when it starts to wait on the latch of the same name: the append's numbers are drawn
     * and owned, and its transaction is open.
     */
    public static final Map<String, CountDownLatch> ENTERED = new ConcurrentHashMap<>();

    /** Poison events throw while this is set. */
    public static volatile boolean poisonous = true;

    public static Snapshot<Tally> tallySnapshot() {
        return Snapshot.of("Tally", Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n()))
                .apply(Tick.class, (doc, e) -> new Tally(doc.id(), doc.count() + 1, e.n()))
                .apply(Poison.class, (doc, e) -> {
                    if (poisonous) {
                        throw new IllegalStateException("poisoned: " + e.why());
                    }
                    return doc;
                });
    }

    /**
     * An inline projection that blocks on {@link Hold} events inside the appending transaction, after its event
     * rows drew their sequence numbers: the append in flight that a high water mark must never pass.
     */
    public static final class Holder extends EventProjection {

        public Holder() {
            super("Holder");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (VETO.equals(event.data())) {
                throw new IllegalStateException("vetoed: the append rolls back");
            }
            if (event.data() instanceof Hold hold) {
                CountDownLatch entered = ENTERED.get(hold.latch());
                if (entered != null) {
                    entered.countDown();
                }
                CountDownLatch latch = LATCHES.get(hold.latch());
                try {
                    if (latch == null || !latch.await(120, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("latch " + hold.latch() + " never opened");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** An async projection that blocks on the first page it sees until {@link #release} opens. */
    public static final class Gate extends EventProjection {
        public final CountDownLatch entered = new CountDownLatch(1);
        public final CountDownLatch release = new CountDownLatch(1);
        public final AtomicInteger applied = new AtomicInteger();

        public Gate() {
            super("Gate");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            entered.countDown();
            try {
                if (!release.await(120, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("gate never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted in the gate", e);
            }
            applied.incrementAndGet();
        }
    }

    /**
     * Blocks every page of one tenant until {@link #release} opens (or the page is cancelled): a tenant with a huge
     * backlog, or a page held past the drain bound while it holds its budget reservation.
     */
    public static final class BlocksTenant extends EventProjection {
        public final CountDownLatch entered = new CountDownLatch(1);
        public final CountDownLatch release = new CountDownLatch(1);
        private final String tenant;

        public BlocksTenant(String name, String tenant, Class<?>... documentTypes) {
            super(name, documentTypes);
            this.tenant = tenant;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (tenant.equals(event.tenantId())) {
                entered.countDown();
                try {
                    if (!release.await(120, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("tenant " + tenant + " was never released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("cancelled in the page", e);
                }
            }
        }
    }

    /** Settings fast enough for tests; correctness never depends on them. */
    public static StoreOptions fastDaemon(TestDatabase db) {
        StoreOptions options = db.options();
        options.events().register(Tick.class).register(Hold.class).register(Poison.class);
        options.daemon().mode(DaemonMode.SOLO)
                .pollingInterval(Duration.ofMillis(50))
                .staleSequenceThreshold(Duration.ofMillis(400))
                .appendFenceTimeout(Duration.ofMillis(200))
                .forcedGapSkipThreshold(Duration.ofSeconds(60))
                .transientRetryBackoff(Duration.ofMillis(20))
                .maxRetryBackoff(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(2))
                .batchSize(50);
        return options;
    }

    public static StoreOptions withTally(StoreOptions options) {
        options.projections().add(tallySnapshot(), Lifecycle.ASYNC);
        return options;
    }

    public static void appendTicks(DocumentStore store, String stream, int count) {
        try (DocumentSession session = store.openSession()) {
            for (int i = 1; i <= count; i++) {
                session.events().append(stream, new Tick(i));
            }
            session.saveChanges();
        }
    }

    public static long committedEvents(TestDatabase db, String stream) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_events") + " WHERE stream_id = '" + stream + "'");
    }

    public static List<String> streams(String prefix, int n) {
        return java.util.stream.IntStream.range(0, n).mapToObj(i -> prefix + "-" + i).toList();
    }
}
