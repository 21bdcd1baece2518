package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SerialScheduledExecutorTest {

    @Test
    void tasksNeverOverlapOnAMultiThreadedScheduler() throws Exception {
        ScheduledExecutorService pool = Executors.newScheduledThreadPool(4);
        try {
            SerialScheduledExecutor serial = new SerialScheduledExecutor(pool);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger maxInside = new AtomicInteger();
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                Runnable task = () -> {
                    maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    inside.decrementAndGet();
                };
                futures.add(i % 2 == 0 ? serial.submit(task) : serial.schedule(task, 1, TimeUnit.MILLISECONDS));
            }
            for (Future<?> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertThat(maxInside.get()).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }
}
