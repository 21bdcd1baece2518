package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.SideEffects;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Poison;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.subscriptions.Cancellation;
import dev.ferret.subscriptions.EventPage;
import dev.ferret.subscriptions.PostCommitListener;
import dev.ferret.subscriptions.SubscriptionBase;
import dev.ferret.subscriptions.SubscriptionController;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * With {@code skipApplyErrors}, a poison event goes to the dead letters alone: none of its document writes, side
 * effects or partial folds commit with the page, it is dead-lettered once however many documents it reached, and
 * the events after it in the same page apply as if it had never been there. Documents are mutable classes whose
 * handlers change them in place before throwing, the hardest case to take back.
 */
@Tag("conformance")
class DeadLetterConformanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A mutable counter; handlers change it in place. */
    public static final class Counter {
        public String id;
        public long count;
        public long lastTick;
        public List<Integer> ticks = new ArrayList<>();
    }

    /** Moves {@code amount} between two accounts; {@code failOn} names the accounts whose fold throws. */
    public record Transfer(String from, String to, int amount, List<String> failOn) {
    }

    public static final class Account {
        public String id;
        public long balance;
        public int transfers;
    }

    public record Published(String stream, int tick) {
    }

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final List<Object> published = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : toClose) {
            closeable.close();
        }
    }

    private TestDatabase database(String label) {
        TestDatabase db = TestDatabase.create(label);
        toClose.add(db);
        return db;
    }

    private DocumentStore open(StoreOptions options) {
        options.daemon().skipApplyErrors(true);
        options.projections().publishPayloads(published::add);
        DocumentStore store = Ferret.createStore(options);
        toClose.add(0, store);
        return store;
    }

    private static void append(DocumentStore store, String stream, Object... events) {
        try (DocumentSession session = store.openSession()) {
            session.events().append(stream, events);
            session.saveChanges();
        }
    }

    private static long deadLetters(TestDatabase db, String shard) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters") + " WHERE projection = '" + shard
                + "'");
    }

    private static long deadLettersAt(TestDatabase db, String shard, long sequence) {
        return db.queryLong("SELECT COUNT(*) FROM " + db.table("pc_dead_letters") + " WHERE projection = '" + shard
                + "' AND seq_id = " + sequence);
    }

    private static long sequenceOf(DocumentStore store, String stream, int index) {
        return store.querySession().fetchStream(stream).get(index).sequence();
    }

    private static Snapshot<Counter> counterSnapshot() {
        return Snapshot.of("Counter", Counter.class)
                .create(Tick.class, (id, e) -> {
                    Counter counter = new Counter();
                    counter.id = id;
                    counter.count = 1;
                    counter.lastTick = e.n();
                    counter.ticks.add(e.n());
                    return counter;
                })
                .apply(Tick.class, (doc, e) -> {
                    doc.count++;
                    doc.lastTick = e.n();
                    doc.ticks.add(e.n());
                    return doc;
                })
                .apply(Poison.class, (doc, e) -> {
                    // changes the document it was handed, then throws: nothing of this may survive
                    doc.count += 1000;
                    doc.lastTick = -1;
                    doc.ticks.add(-1);
                    throw new IllegalStateException("poisoned: " + e.why());
                })
                .raiseSideEffects((doc, event, effects) -> {
                    if (event.data() instanceof Tick tick) {
                        effects.publish(new Published(doc.id, tick.n()));
                    }
                });
    }

    @Test
    void aSnapshotThatChangesItsDocumentAndThenThrowsKeepsOnlyTheFoldOfTheGoodEvents() {
        TestDatabase db = database("dlsnapshot");
        StoreOptions options = fastDaemon(db);
        options.projections().add(counterSnapshot(), Lifecycle.ASYNC);
        DocumentStore store = open(options);
        append(store, "c", new Tick(1), new Tick(2));
        store.waitForNonStaleProjectionData(WAIT);
        // one page: a committed document the poison changes in place, with good events on either side of it
        append(store, "c", new Tick(3), new Poison("bad"), new Tick(4), new Tick(5));
        store.waitForNonStaleProjectionData(WAIT);

        Counter counter = store.querySession().load(Counter.class, "c").orElseThrow();
        assertThat(counter.count).isEqualTo(5);
        assertThat(counter.lastTick).isEqualTo(5);
        assertThat(counter.ticks).containsExactly(1, 2, 3, 4, 5);
        assertThat(deadLetters(db, "Counter:All")).isEqualTo(1);
        assertThat(deadLettersAt(db, "Counter:All", sequenceOf(store, "c", 3))).isEqualTo(1);
        await().atMost(WAIT).untilAsserted(() -> assertThat(published).containsExactly(new Published("c", 1),
                new Published("c", 2), new Published("c", 3), new Published("c", 4), new Published("c", 5)));
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    @Test
    void aPoisonEventInThePageThatCreatesTheDocumentLeavesTheCreationAndLaterEventsIntact() {
        TestDatabase db = database("dlcreate");
        StoreOptions options = fastDaemon(db);
        options.projections().add(counterSnapshot(), Lifecycle.ASYNC);
        DocumentStore store = open(options);
        append(store, "n", new Tick(1), new Poison("bad"), new Tick(2));
        store.waitForNonStaleProjectionData(WAIT);

        Counter counter = store.querySession().load(Counter.class, "n").orElseThrow();
        assertThat(counter.count).isEqualTo(2);
        assertThat(counter.ticks).containsExactly(1, 2);
        assertThat(deadLetters(db, "Counter:All")).isEqualTo(1);
    }

    private static MultiStreamProjection<Account> accounts() {
        return MultiStreamProjection.of("Accounts", Account.class)
                .identities(Transfer.class, transfer -> List.of(transfer.from(), transfer.to()))
                .create(Transfer.class, (id, transfer) -> {
                    Account account = new Account();
                    account.id = id;
                    return move(account, transfer);
                })
                .apply(Transfer.class, (account, transfer) -> move(account, transfer));
    }

    private static Account move(Account account, Transfer transfer) {
        account.balance += account.id.equals(transfer.from()) ? -transfer.amount() : transfer.amount();
        account.transfers++;
        if (transfer.failOn().contains(account.id)) {
            throw new IllegalStateException("transfer refused by " + account.id);
        }
        return account;
    }

    @Test
    void aMultiStreamEventRoutedToTwoDocumentsIsDeadLetteredOnceAndReachesNeitherDocument() {
        TestDatabase db = database("dlmulti");
        StoreOptions options = fastDaemon(db);
        options.events().register(Transfer.class);
        options.projections().add(accounts(), Lifecycle.ASYNC);
        DocumentStore store = open(options);
        append(store, "t", new Transfer("a", "b", 10, List.of()));
        store.waitForNonStaleProjectionData(WAIT);
        append(store, "t",
                new Transfer("a", "b", 5, List.of()),
                // the first document folds, the second throws: the first must not keep it
                new Transfer("a", "b", 100, List.of("b")),
                // both throw: still one dead letter
                new Transfer("a", "b", 1000, List.of("a", "b")),
                new Transfer("b", "a", 1, List.of()));
        store.waitForNonStaleProjectionData(WAIT);

        Account a = store.querySession().load(Account.class, "a").orElseThrow();
        Account b = store.querySession().load(Account.class, "b").orElseThrow();
        assertThat(a.balance).isEqualTo(-10 - 5 + 1);
        assertThat(a.transfers).isEqualTo(3);
        assertThat(b.balance).isEqualTo(10 + 5 - 1);
        assertThat(b.transfers).isEqualTo(3);
        assertThat(deadLetters(db, "Accounts:All")).isEqualTo(2);
        assertThat(deadLettersAt(db, "Accounts:All", sequenceOf(store, "t", 2))).isEqualTo(1);
        assertThat(deadLettersAt(db, "Accounts:All", sequenceOf(store, "t", 3))).isEqualTo(1);
        assertThat(store.daemon().status().healthy()).isTrue();
    }

    /** Loads, changes in place and stores a counter per stream; a poison event does the same, then throws. */
    public static final class CountingProjection extends EventProjection {

        public CountingProjection() {
            super("Counting", Counter.class);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            Counter counter = operations.load(Counter.class, event.streamId()).orElseGet(() -> {
                Counter fresh = new Counter();
                fresh.id = event.streamId();
                return fresh;
            });
            if (event.data() instanceof Tick tick) {
                counter.count++;
                counter.lastTick = tick.n();
                counter.ticks.add(tick.n());
                operations.store(counter);
            } else if (event.data() instanceof Poison poison) {
                counter.count += 1000;
                counter.ticks.add(-1);
                operations.store(counter);
                Counter other = new Counter();
                other.id = event.streamId() + "-poisoned";
                operations.store(other);
                if (!poison.why().equals("late")) {
                    throw new IllegalStateException("poisoned: " + poison.why());
                }
            }
        }

        @Override
        public void raiseSideEffects(EventEnvelope event, SideEffects effects) {
            effects.publish(new Published(event.streamId(), (int) event.sequence()));
            if (event.data() instanceof Poison) {
                // the apply went through; the side effects throw after raising one
                throw new IllegalStateException("side effects refused");
            }
        }
    }

    @Test
    void anEventProjectionThatStoresAndThenThrowsLeavesNoWriteOrSideEffectAndLaterEventsReadTheGoodState() {
        TestDatabase db = database("dlevent");
        StoreOptions options = fastDaemon(db);
        options.projections().add(new CountingProjection(), Lifecycle.ASYNC);
        DocumentStore store = open(options);
        append(store, "e", new Tick(1));
        store.waitForNonStaleProjectionData(WAIT);
        append(store, "e", new Tick(2), new Poison("in apply"), new Tick(3), new Poison("late"), new Tick(4));
        store.waitForNonStaleProjectionData(WAIT);

        Counter counter = store.querySession().load(Counter.class, "e").orElseThrow();
        assertThat(counter.count).isEqualTo(4);
        assertThat(counter.ticks).containsExactly(1, 2, 3, 4);
        assertThat(store.querySession().load(Counter.class, "e-poisoned")).isEmpty();
        assertThat(deadLetters(db, "Counting:All")).isEqualTo(2);
        assertThat(deadLettersAt(db, "Counting:All", sequenceOf(store, "e", 2))).isEqualTo(1);
        assertThat(deadLettersAt(db, "Counting:All", sequenceOf(store, "e", 4))).isEqualTo(1);
        List<Long> good = List.of(sequenceOf(store, "e", 0), sequenceOf(store, "e", 1), sequenceOf(store, "e", 3),
                sequenceOf(store, "e", 5));
        // the outbox delivers after the commit, on its own schedule
        await().atMost(WAIT).untilAsserted(() -> assertThat(published)
                .extracting(message -> (long) ((Published) message).tick()).containsExactlyElementsOf(good));
    }

    /** Marks every poison event bad twice, as a subscription reporting it per document it touches might. */
    public static final class MarksTwice extends SubscriptionBase {

        @Override
        public PostCommitListener processEvents(EventPage page, SubscriptionController controller,
                                                DocumentOperations operations, Cancellation cancellation) {
            for (EventEnvelope event : page.events()) {
                if (event.data() instanceof Poison poison) {
                    controller.markBad(event, new IllegalStateException("first: " + poison.why()));
                    controller.markBad(event, new IllegalStateException("second: " + poison.why()));
                }
            }
            return PostCommitListener.NONE;
        }
    }

    @Test
    void aSubscriptionMarkingAnEventBadTwiceWritesOneDeadLetter() {
        TestDatabase db = database("dlsub");
        StoreOptions options = fastDaemon(db);
        options.projections().subscribe(new MarksTwice());
        DocumentStore store = open(options);
        append(store, "s", new Tick(1), new Poison("bad"), new Tick(2));
        store.waitForNonStaleProjectionData(WAIT);

        assertThat(deadLetters(db, "MarksTwice:All")).isEqualTo(1);
        assertThat(deadLettersAt(db, "MarksTwice:All", sequenceOf(store, "s", 1))).isEqualTo(1);
    }
}
