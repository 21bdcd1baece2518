package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@code ferret.daemon.worker-threads} in the container: at most that many daemon tasks on the managed executor. */
class BoundedWorkersTest {

    @Test
    void noMoreThanTheLimitRunAtOnceAndEveryQueuedTaskRunsInTheEnd() throws Exception {
        ExecutorService container = Executors.newCachedThreadPool();
        try {
            BoundedWorkers workers = new BoundedWorkers(container, 3);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger inFlight = new AtomicInteger();
            AtomicInteger mostAtOnce = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(20);
            for (int i = 0; i < 20; i++) {
                workers.execute(() -> {
                    mostAtOnce.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        inFlight.decrementAndGet();
                        done.countDown();
                    }
                });
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> inFlight.get() == 3);
            assertThat(workers.running()).isEqualTo(3);
            release.countDown();
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(mostAtOnce.get()).isEqualTo(3);
            await().atMost(Duration.ofSeconds(30)).until(() -> workers.running() == 0);
        } finally {
            container.shutdownNow();
        }
    }

    @Test
    void aTaskTheContainerRefusesGivesItsSlotBackSoLaterTasksStillRun() throws Exception {
        ExecutorService container = Executors.newCachedThreadPool();
        AtomicBoolean refusing = new AtomicBoolean(true);
        try {
            BoundedWorkers workers = new BoundedWorkers(command -> {
                if (refusing.get()) {
                    throw new RejectedExecutionException("suspended");
                }
                container.execute(command);
            }, 1);
            workers.execute(() -> { });
            assertThat(workers.running()).isZero();
            refusing.set(false);
            CountDownLatch ran = new CountDownLatch(1);
            workers.execute(ran::countDown);
            assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            container.shutdownNow();
        }
    }
}
