package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.runtime.dialect.CommitSignals;
import dev.ferret.runtime.retry.Backoff;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The push's two loops with a scripted signal channel (connections from an in-memory H2, which sends nothing
 * itself): sends fold a burst into one in flight and one after it, a listener that fails listens again after the
 * back-off, and stop ends the listening loop within one step and gives its connection back unlistened.
 */
class CommitPushTest {

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
    }

    /** A channel whose sends, listens and arrivals the test scripts. */
    private static final class ScriptedSignals implements CommitSignals {
        final AtomicInteger sends = new AtomicInteger();
        final AtomicInteger listens = new AtomicInteger();
        final AtomicInteger unlistens = new AtomicInteger();
        final AtomicInteger listenFailuresLeft = new AtomicInteger();
        final BlockingQueue<String> arriving = new LinkedBlockingQueue<>();
        volatile CountDownLatch sendGate = new CountDownLatch(0);

        @Override
        public String channel() {
            return "test_channel";
        }

        @Override
        public void send(Connection connection) {
            sends.incrementAndGet();
            try {
                sendGate.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void listen(Connection connection) throws SQLException {
            if (listenFailuresLeft.getAndDecrement() > 0) {
                throw new SQLException("test: the listening connection broke", "08006");
            }
            listens.incrementAndGet();
        }

        @Override
        public boolean await(Connection connection, Duration timeout) throws SQLException {
            try {
                return arriving.poll(timeout.toMillis(), TimeUnit.MILLISECONDS) != null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted", e);
            }
        }

        @Override
        public void unlisten(Connection connection) {
            unlistens.incrementAndGet();
        }
    }

    private static JdbcDataSource h2() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:commitpush;DB_CLOSE_DELAY=-1");
        return dataSource;
    }

    @Test
    void aBurstOfCommitsSendsOneSignalInFlightAndOneMoreAfterItNeverOneEach() {
        ScriptedSignals signals = new ScriptedSignals();
        signals.sendGate = new CountDownLatch(1);
        CommitPush push = new CommitPush(signals, h2(), threads, () -> { },
                new Backoff(Duration.ofMillis(10), Duration.ofMillis(50)));
        push.committed();
        await().atMost(Duration.ofSeconds(10)).until(() -> signals.sends.get() == 1);
        for (int i = 0; i < 100; i++) {
            push.committed();
        }
        signals.sendGate.countDown();
        // the hundred commits after the first send started are told by one more send
        await().atMost(Duration.ofSeconds(10)).until(() -> signals.sends.get() == 2);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> signals.sends.get() == 2);
    }

    @Test
    void aListenerThatFailsListensAgainAfterTheBackOffWakesOnEachArrivalAndStopsWithinAStep() {
        ScriptedSignals signals = new ScriptedSignals();
        signals.listenFailuresLeft.set(2);
        AtomicInteger wakes = new AtomicInteger();
        CommitPush push = new CommitPush(signals, h2(), threads, wakes::incrementAndGet,
                new Backoff(Duration.ofMillis(10), Duration.ofMillis(50)));
        push.start();
        await().atMost(Duration.ofSeconds(10)).until(push::listening);
        assertThat(signals.listens).hasValue(1);
        // one wake on listening (whatever committed while nobody listened), then one per arrival
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() == 1);
        signals.arriving.add("a");
        signals.arriving.add("b");
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() == 3);

        long stopping = System.nanoTime();
        push.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> !push.listening() && signals.unlistens.get() == 1);
        assertThat(Duration.ofNanos(System.nanoTime() - stopping)).as("one step of %s, with room", CommitPush.STEP)
                .isLessThan(Duration.ofSeconds(5));
    }
}
