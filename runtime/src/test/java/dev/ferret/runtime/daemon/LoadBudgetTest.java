package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The budget alone, driven by threads, latches and a hand-held memory signal: no database, no sleeps. */
class LoadBudgetTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final BooleanSupplier NEVER = () -> false;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    // --- the basics

    @Test
    void anUnboundedBudgetIsInertAndNeverListensForMemory() throws Exception {
        ManualSignal signal = new ManualSignal();
        LoadBudget budget = new LoadBudget(0, signal);
        assertThat(budget.isBounded()).isFalse();
        LoadBudget.Reservation room = budget.reserve(1_000_000, NEVER);
        LoadBudget.Reservation other = budget.reserve(1_000_000, NEVER);
        assertThat(other).isSameAs(room); // nothing allocated per page
        budget.trim(room, 1);
        budget.release(room);
        assertThat(budget.inFlight()).isZero();
        assertThat(budget.peakInFlight()).isZero();
        assertThat(budget.grants()).isZero();
        assertThat(signal.listening()).isFalse();
    }

    @Test
    void bytesAreASecondBoundAPageTooBigIsLetInAloneAndAReleaseLetsTheNextIn() throws Exception {
        LoadBudget budget = new LoadBudget(0, 1_000, MemorySignal.NONE);
        assertThat(budget.isBounded()).isTrue();
        assertThat(budget.countsBytes()).isTrue();
        // events are not bounded: only bytes decide
        LoadBudget.Reservation a = budget.tryReserve(10_000, 600, room -> { });
        assertThat(a).isNotNull();
        assertThat(a.bytes()).isEqualTo(600);
        CompletableFuture<LoadBudget.Reservation> second = new CompletableFuture<>();
        assertThat(budget.tryReserve(10, 600, second::complete)).as("600 + 600 > 1,000 bytes").isNull();
        budget.trim(a, 10_000, 300);
        LoadBudget.Reservation b = second.get(30, TimeUnit.SECONDS);
        assertThat(b.bytes()).isEqualTo(600);
        budget.release(a);
        budget.release(b);
        assertThat(budget.peakBytesInFlight()).as("the second went in once the first shrank to 300").isEqualTo(900);

        // a page wanting more than the whole budget counts as the whole budget, and goes in when nothing is in flight
        LoadBudget.Reservation huge = budget.tryReserve(1, 50_000, room -> { });
        assertThat(huge).isNotNull();
        assertThat(huge.bytes()).isEqualTo(1_000);
        CompletableFuture<LoadBudget.Reservation> after = new CompletableFuture<>();
        assertThat(budget.tryReserve(1, 1, after::complete)).isNull();
        budget.release(huge);
        assertThat(after.get(30, TimeUnit.SECONDS).bytes()).isEqualTo(1);
    }

    @Test
    void roomIsReservedTrimmedAndReleased() throws Exception {
        LoadBudget budget = new LoadBudget(1_000, MemorySignal.NONE);
        LoadBudget.Reservation a = budget.reserve(500, NEVER);
        LoadBudget.Reservation b = budget.reserve(500, NEVER);
        assertThat(budget.inFlight()).isEqualTo(1_000);
        budget.trim(a, 120);
        assertThat(a.events()).isEqualTo(120);
        assertThat(budget.inFlight()).isEqualTo(620);
        budget.trim(a, 400); // a trim never grows a reservation
        assertThat(budget.inFlight()).isEqualTo(620);
        budget.release(a);
        budget.release(a); // a second release frees nothing more
        budget.release(b);
        assertThat(budget.inFlight()).isZero();
        assertThat(budget.peakInFlight()).isEqualTo(1_000);
        assertThat(budget.grants()).isEqualTo(2);
        assertThat(List.of(a.turnsWaited(), b.turnsWaited())).containsOnly(0L);
    }

    @Test
    void theThresholdConstructorBuildsAWorkingJvmSignal() throws Exception {
        LoadBudget budget = new LoadBudget(1_000, 0.95);
        LoadBudget.Reservation room = budget.reserve(10, NEVER);
        budget.release(room);
        assertThat(budget.inFlight()).isZero();
        budget.close();
        assertThatCode(budget::close).doesNotThrowAnyException();
        // out of (0, 1): no signal at all
        assertThatCode(() -> new LoadBudget(1_000, 1.0).close()).doesNotThrowAnyException();
        assertThatCode(() -> new LoadBudget(0, 0.9).close()).doesNotThrowAnyException();
    }

    // --- fairness

    @Test
    void waitersAreLetInFirstComeFirstServedAndCountTheTurnsAheadOfThem() throws Exception {
        LoadBudget budget = new LoadBudget(100, MemorySignal.NONE);
        LoadBudget.Reservation holder = budget.reserve(100, NEVER);
        List<String> order = new CopyOnWriteArrayList<>();
        List<Future<LoadBudget.Reservation>> waiters = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            waiters.add(threads.submit(() -> {
                LoadBudget.Reservation room = budget.reserve(100, NEVER);
                order.add(name);
                budget.release(room);
                return room;
            }));
            int joined = waiters.size();
            await().atMost(WAIT).until(() -> budget.waiting() == joined);
        }
        budget.release(holder);
        List<Long> turns = new ArrayList<>();
        for (Future<LoadBudget.Reservation> waiter : waiters) {
            turns.add(waiter.get(30, TimeUnit.SECONDS).turnsWaited());
        }
        assertThat(order).containsExactly("first", "second", "third");
        assertThat(turns).containsExactly(0L, 1L, 2L);
    }

    @Test
    void underContentionNoReservationWaitsMoreTurnsThanThereAreOtherAgents() throws Exception {
        int agents = 6;
        int pages = 200;
        LoadBudget budget = new LoadBudget(100, MemorySignal.NONE); // one 60-page or two 40-pages at a time
        AtomicLong mostTurns = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> runs = new ArrayList<>();
        for (int agent = 0; agent < agents; agent++) {
            runs.add(threads.submit(() -> {
                start.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                int done = 0;
                for (int page = 0; page < pages; page++) {
                    LoadBudget.Reservation room = budget.reserve(random.nextBoolean() ? 40 : 60, NEVER);
                    mostTurns.accumulateAndGet(room.turnsWaited(), Math::max);
                    if (random.nextBoolean()) {
                        budget.trim(room, random.nextLong(room.events() + 1));
                    }
                    budget.release(room);
                    done++;
                }
                return done;
            }));
        }
        start.countDown();
        for (Future<Integer> run : runs) {
            assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(pages);
        }
        assertThat(mostTurns.get()).isLessThanOrEqualTo(agents - 1);
        assertThat(budget.grants()).isEqualTo((long) agents * pages);
        assertThat(budget.inFlight()).isZero();
        assertThat(budget.waiting()).isZero();
    }

    // --- the bound

    @Test
    void concurrentHammeringNeverExceedsTheBudgetAndDrainsToZero() throws Exception {
        int agents = 8;
        int pages = 500;
        long capacity = 1_000;
        LoadBudget budget = new LoadBudget(capacity, MemorySignal.NONE);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> runs = new ArrayList<>();
        for (int agent = 0; agent < agents; agent++) {
            runs.add(threads.submit(() -> {
                start.await();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                int done = 0;
                for (int page = 0; page < pages; page++) {
                    // now and then a page bigger than the whole budget
                    LoadBudget.Reservation room = budget.reserve(random.nextLong(1, 1_500), NEVER);
                    assertThat(room.events()).isLessThanOrEqualTo(capacity);
                    switch (random.nextInt(3)) {
                        case 0 -> budget.trim(room, random.nextLong(room.events() + 1)); // loaded fewer
                        case 1 -> budget.trim(room, room.events() + random.nextLong(100)); // a full page
                        default -> { } // load failed: released untrimmed
                    }
                    budget.release(room);
                    done++;
                }
                return done;
            }));
        }
        start.countDown();
        for (Future<Integer> run : runs) {
            assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(pages);
        }
        assertThat(budget.peakInFlight()).isPositive().isLessThanOrEqualTo(capacity);
        assertThat(budget.inFlight()).isZero();
        assertThat(budget.waiting()).isZero();
        assertThat(budget.grants()).isEqualTo((long) agents * pages);
    }

    // --- always allowed when nothing is in flight

    @Test
    void aPageBiggerThanTheBudgetIsGrantedWhenNothingIsInFlight() throws Exception {
        LoadBudget budget = new LoadBudget(10, MemorySignal.NONE);
        for (int page = 0; page < 20; page++) {
            LoadBudget.Reservation room = budget.reserve(500, NEVER);
            assertThat(room).isNotNull();
            assertThat(room.events()).isEqualTo(10); // counts as the whole budget
            budget.trim(room, 500);
            budget.release(room);
        }
        assertThat(budget.inFlight()).isZero();
    }

    @Test
    void agentsUnderABudgetSmallerThanOnePageAllFinishOneAtATime() throws Exception {
        LoadBudget budget = new LoadBudget(10, MemorySignal.NONE);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Integer>> runs = new ArrayList<>();
        for (int agent = 0; agent < 4; agent++) {
            runs.add(threads.submit(() -> {
                start.await();
                for (int page = 0; page < 50; page++) {
                    budget.release(budget.reserve(500, NEVER));
                }
                return 50;
            }));
        }
        start.countDown();
        for (Future<Integer> run : runs) {
            assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo(50);
        }
        assertThat(budget.peakInFlight()).isEqualTo(10);
        assertThat(budget.inFlight()).isZero();
    }

    // --- the memory backstop

    @Test
    void underMemoryPressureNothingNewIsLetInUntilTheWorkInFlightDrains() throws Exception {
        ManualSignal signal = new ManualSignal();
        LoadBudget budget = new LoadBudget(1_000, signal);
        assertThat(signal.listening()).isTrue();
        for (int page = 0; page < 100; page++) {
            budget.release(budget.reserve(10, NEVER));
        }
        assertThat(signal.asked()).as("no pressure: the signal is never asked per page").isZero();

        LoadBudget.Reservation inFlight = budget.reserve(10, NEVER);
        signal.raise();
        Future<LoadBudget.Reservation> next = threads.submit(() -> budget.reserve(10, NEVER));
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        await().atMost(WAIT).until(() -> signal.asked() > 0); // the head re-asks while pressure is on
        assertThat(next).isNotDone();
        assertThat(budget.inFlight()).isEqualTo(10);

        budget.release(inFlight); // nothing in flight: always allowed, pressure or not
        LoadBudget.Reservation granted = next.get(30, TimeUnit.SECONDS);
        assertThat(granted.events()).isEqualTo(10);
        assertThat(budget.inFlight()).isEqualTo(10);
        budget.release(granted);
    }

    @Test
    void aWaiterIsLetInOnceTheSignalSaysTheHeapRecovered() throws Exception {
        ManualSignal signal = new ManualSignal();
        LoadBudget budget = new LoadBudget(1_000, signal);
        LoadBudget.Reservation inFlight = budget.reserve(10, NEVER);
        signal.raise();
        Future<LoadBudget.Reservation> next = threads.submit(() -> budget.reserve(10, NEVER));
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        assertThat(next).isNotDone();

        signal.clear();
        assertThat(next.get(30, TimeUnit.SECONDS)).isNotNull();
        assertThat(budget.inFlight()).isEqualTo(20); // granted beside the work still in flight
        int asked = signal.asked();
        budget.release(budget.reserve(10, NEVER));
        assertThat(signal.asked()).as("pressure cleared: back to the unpolled fast path").isEqualTo(asked);
        budget.release(inFlight);
    }

    @Test
    void withNothingInFlightAPageIsGrantedEvenUnderPressure() throws Exception {
        ManualSignal signal = new ManualSignal();
        LoadBudget budget = new LoadBudget(1_000, signal);
        signal.raise();
        LoadBudget.Reservation room = budget.reserve(10, () -> true);
        assertThat(room).isNotNull();
        // but the next one, with that page in flight, is held back
        assertThat(budget.reserve(10, () -> true)).isNull();
        budget.release(room);
    }

    @Test
    void aPressureSignalLandingWhileTheBudgetReAsksIsNotLost() throws Exception {
        ManualSignal signal = new ManualSignal();
        LoadBudget budget = new LoadBudget(1_000, signal);
        LoadBudget.Reservation inFlight = budget.reserve(10, NEVER);
        signal.raise();
        signal.clear();
        // the budget reads "recovered", and a collection past the threshold is signalled before it acts on that
        signal.duringNextAsk(signal::raise);
        assertThat(budget.reserve(10, () -> true)).isNull();
        assertThat(budget.inFlight()).isEqualTo(10);
        budget.release(inFlight);
    }

    // --- giving up

    @Test
    void aWaiterThatGivesUpLeavesTheLineAndTheOneBehindIsServed() throws Exception {
        LoadBudget budget = new LoadBudget(100, MemorySignal.NONE);
        LoadBudget.Reservation holder = budget.reserve(60, NEVER);
        AtomicBoolean stopped = new AtomicBoolean();
        Future<LoadBudget.Reservation> big = threads.submit(() -> budget.reserve(100, stopped::get));
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        Future<LoadBudget.Reservation> small = threads.submit(() -> budget.reserve(30, NEVER));
        await().atMost(WAIT).until(() -> budget.waiting() == 2);
        assertThat(small).isNotDone(); // it fits, but waits its turn behind the big one

        stopped.set(true);
        assertThat(big.get(30, TimeUnit.SECONDS)).isNull();
        LoadBudget.Reservation served = small.get(30, TimeUnit.SECONDS);
        assertThat(served.turnsWaited()).as("who gave up took no turn").isZero();
        assertThat(budget.waiting()).isZero();
        assertThat(budget.inFlight()).isEqualTo(90);
        assertThat(budget.grants()).isEqualTo(2);
        budget.release(served);
        budget.release(holder);
        assertThat(budget.inFlight()).isZero();
    }

    @Test
    void aStoppedShardDoesNotWaitAtAll() throws Exception {
        LoadBudget budget = new LoadBudget(10, MemorySignal.NONE);
        LoadBudget.Reservation holder = budget.reserve(10, NEVER);
        assertThat(budget.reserve(10, () -> true)).isNull();
        assertThat(budget.waiting()).isZero();
        assertThat(budget.inFlight()).isEqualTo(10);
        budget.release(holder);
    }

    @Test
    void anInterruptedWaiterThrowsAndLeavesNoTrace() throws Exception {
        LoadBudget budget = new LoadBudget(100, MemorySignal.NONE);
        LoadBudget.Reservation holder = budget.reserve(60, NEVER);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(budget.reserve(100, NEVER));
            } catch (InterruptedException e) {
                outcome.set(e);
            }
        });
        waiter.start();
        await().atMost(WAIT).until(() -> budget.waiting() == 1);
        Future<LoadBudget.Reservation> behind = threads.submit(() -> budget.reserve(30, NEVER));
        await().atMost(WAIT).until(() -> budget.waiting() == 2);

        waiter.interrupt();
        waiter.join(30_000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        LoadBudget.Reservation served = behind.get(30, TimeUnit.SECONDS);
        assertThat(served.turnsWaited()).isZero();
        assertThat(budget.waiting()).isZero();
        assertThat(budget.inFlight()).isEqualTo(90);
        budget.release(served);
        budget.release(holder);
        assertThat(budget.inFlight()).isZero();
        assertThat(budget.grants()).isEqualTo(2);
    }

    /** Pressure by hand: {@link #raise} is a collection past the threshold, {@link #clear} a heap that recovered. */
    private static final class ManualSignal implements MemorySignal {
        private final AtomicInteger asked = new AtomicInteger();
        private final AtomicReference<Runnable> duringNextAsk = new AtomicReference<>();
        private volatile Runnable onPressure;
        private volatile boolean above;

        @Override
        public void listen(Runnable onPressure) {
            this.onPressure = onPressure;
        }

        @Override
        public boolean stillAbove() {
            asked.incrementAndGet();
            boolean answer = above;
            Runnable hook = duringNextAsk.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
            return answer;
        }

        void raise() {
            above = true;
            onPressure.run();
        }

        void clear() {
            above = false;
        }

        void duringNextAsk(Runnable hook) {
            duringNextAsk.set(hook);
        }

        boolean listening() {
            return onPressure != null;
        }

        int asked() {
            return asked.get();
        }
    }
}
