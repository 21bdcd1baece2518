package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.events.StoredEvent;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SharedLoadsTest {

    private static final LogPartition ACME = new LogPartition("acme", new TenantDatabases.Database("main", null));
    private static final LogPartition GLOBEX = new LogPartition("globex", new TenantDatabases.Database("main", null));

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    private static void awaitOpen(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static SharedPage page(long from, long to, int limit, int rows) {
        List<SharedPage.Row> list = new ArrayList<>();
        for (int i = 1; i <= rows; i++) {
            list.add(new SharedPage.Row(new StoredEvent(from + i, "00000000-0000-0000-0000-00000000000" + (i % 10),
                    "s", i, "tick", "{}", null, "acme", null, null, null), from + i));
        }
        return new SharedPage(from, to, limit, list);
    }

    @Test
    void aPageIsReadOnceForEveryShardAskingForTheSameSliceAndLimit() throws Exception {
        SharedLoads loads = SharedLoads.of(1 << 20, 3);
        AtomicInteger reads = new AtomicInteger();
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        SharedPage read = page(0, 5, 100, 5);
        Future<SharedPage> first = threads.submit(() -> loads.load(ACME, 0, 5, 100, () -> {
            reads.incrementAndGet();
            reading.countDown();
            awaitOpen(release);
            return read;
        }));
        assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
        // asks while the first still reads: waits for its result
        Future<SharedPage> second = threads.submit(() -> loads.load(ACME, 0, 5, 100, () -> {
            reads.incrementAndGet();
            return page(0, 5, 100, 5);
        }));
        release.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS)).isSameAs(read);
        assertThat(second.get(30, TimeUnit.SECONDS)).isSameAs(read);
        // asks later: kept
        assertThat(loads.load(ACME, 0, 5, 100, () -> page(0, 5, 100, 5))).isSameAs(read);
        assertThat(reads).hasValue(1);
        assertThat(loads.loads()).isEqualTo(1);
        assertThat(loads.shared()).isEqualTo(2);
        // another tenant, floor or mark is another slice
        assertThat(loads.load(GLOBEX, 0, 5, 100, () -> page(0, 5, 100, 5))).isNotSameAs(read);
        assertThat(loads.load(ACME, 1, 5, 100, () -> page(1, 5, 100, 4))).isNotSameAs(read);
        assertThat(loads.load(ACME, 0, 6, 100, () -> page(0, 6, 100, 6))).isNotSameAs(read);
    }

    @Test
    void aShortPageServesAnyLargerLimitAndAFullPageOnlyItsOwn() throws Exception {
        SharedLoads loads = SharedLoads.of(1 << 20, 2);
        SharedPage shortPage = loads.load(ACME, 0, 5, 100, () -> page(0, 5, 100, 5));
        assertThat(loads.load(ACME, 0, 5, 500, () -> page(0, 5, 500, 5))).isSameAs(shortPage);
        assertThat(loads.load(ACME, 0, 5, 5, () -> page(0, 5, 5, 5)))
                .as("five rows at a limit of five: the page may end below the mark").isNotSameAs(shortPage);

        SharedPage full = loads.load(GLOBEX, 0, 50, 10, () -> page(0, 50, 10, 10));
        assertThat(loads.load(GLOBEX, 0, 50, 10, () -> page(0, 50, 10, 10))).isSameAs(full);
        assertThat(loads.load(GLOBEX, 0, 50, 20, () -> page(0, 50, 20, 20))).isNotSameAs(full);
        assertThat(loads.load(GLOBEX, 0, 50, 5, () -> page(0, 50, 5, 5))).isNotSameAs(full);
    }

    @Test
    void aFailedLoadIsNotKeptAndTheShardWaitingForItReadsItsOwn() throws Exception {
        SharedLoads loads = SharedLoads.of(1 << 20, 2);
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<SharedPage> failing = threads.submit(() -> loads.load(ACME, 0, 5, 100, () -> {
            reading.countDown();
            awaitOpen(release);
            throw new SQLException("connection lost");
        }));
        assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
        SharedPage own = page(0, 5, 100, 5);
        Future<SharedPage> waiting = threads.submit(() -> loads.load(ACME, 0, 5, 100, () -> own));
        release.countDown();
        assertThatThrownBy(() -> failing.get(30, TimeUnit.SECONDS)).hasRootCauseMessage("connection lost");
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isSameAs(own);
        SharedPage later = page(0, 5, 100, 5);
        assertThat(loads.load(ACME, 0, 5, 100, () -> later)).as("nothing kept from the failure").isIn(own, later);
    }

    @Test
    void aWaitingShardThatIsInterruptedStopsWaitingAndKeepsTheInterrupt() throws Exception {
        SharedLoads loads = SharedLoads.of(1 << 20, 2);
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        threads.submit(() -> loads.load(ACME, 0, 5, 100, () -> {
            reading.countDown();
            awaitOpen(release);
            return page(0, 5, 100, 5);
        }));
        assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                loads.load(ACME, 0, 5, 100, () -> page(0, 5, 100, 5));
                interruptKept.complete(false);
            } catch (SQLException e) {
                interruptKept.complete(Thread.currentThread().isInterrupted());
            }
        });
        waiter.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);
        waiter.interrupt();
        assertThat(interruptKept.get(30, TimeUnit.SECONDS)).isTrue();
        release.countDown();
    }

    @Test
    void withOneProjectionOrNoRoomEveryShardReadsItsOwn() throws Exception {
        for (SharedLoads loads : List.of(SharedLoads.of(1 << 20, 1), SharedLoads.of(0, 5))) {
            SharedPage first = loads.load(ACME, 0, 5, 100, () -> page(0, 5, 100, 5));
            assertThat(loads.load(ACME, 0, 5, 100, () -> page(0, 5, 100, 5))).isNotSameAs(first);
            assertThat(loads.shared()).isZero();
        }
    }
}
