package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The seam's contract outside a container, without a database: with no interceptor there is one attempt, so a
 * transient failure travels through {@code @Retry} wrapped and comes back to the runtime as itself, and anything
 * else passes straight through. With {@code @Retry}'s re-invocation played by hand, the retries and back-offs are
 * the daemon settings', recorded instead of slept.
 */
class FaultToleranceRetriesTest {

    private final TransientRetry retry = retryOf(new FaultToleranceRetries(), new DaemonSettings());

    private final List<Duration> waits = new ArrayList<>();

    /** Plays the container's {@code @Retry}: invokes again while the method throws TransientPageFailure. */
    private final FaultToleranceRetries intercepted = new FaultToleranceRetries(waits::add) {
        @Override
        public <T> T attempt(Callable<T> attempt, Predicate<Throwable> isTransient) throws Exception {
            for (int invocation = 0; ; invocation++) {
                try {
                    return super.attempt(attempt, isTransient);
                } catch (TransientPageFailure retried) {
                    assertThat(invocation).as("re-invocations").isLessThan(100);
                }
            }
        }
    };

    private static TransientRetry retryOf(FaultToleranceRetries bean, DaemonSettings settings) {
        return bean.factory().create("Orders:All", settings, e -> e instanceof SQLTransientConnectionException);
    }

    /** How often a page that always fails with {@code failure} was attempted before it came back to the runtime. */
    private static int attemptsOfAPageFailingWith(TransientRetry retry, Exception failure) {
        AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> retry.call(() -> {
            attempts.incrementAndGet();
            throw failure;
        })).isSameAs(failure);
        return attempts.get();
    }

    @Test
    void aTransientFailureComesBackUnwrappedOnceRetriesAreSpent() {
        assertThat(attemptsOfAPageFailingWith(retry, new SQLTransientConnectionException("down", "08001")))
                .isEqualTo(1);
    }

    @Test
    void otherFailuresAndResultsPassThrough() throws Exception {
        SQLException syntax = new SQLException("syntax", "42000");
        assertThatThrownBy(() -> retry.call(() -> {
            throw syntax;
        })).isSameAs(syntax);
        assertThat(retry.call(() -> 42)).isEqualTo(42);
    }

    @Test
    void theRetriesAndBackOffsAreTheDaemonSettingsNotAFixedFiveTimesOneHundredMilliseconds() {
        DaemonSettings settings = new DaemonSettings().maxTransientRetries(3)
                .transientRetryBackoff(Duration.ofMillis(40)).maxRetryBackoff(Duration.ofMillis(100));
        assertThat(attemptsOfAPageFailingWith(retryOf(intercepted, settings),
                new SQLTransientConnectionException("down", "08001"))).isEqualTo(4);
        assertThat(waits).containsExactly(Duration.ofMillis(40), Duration.ofMillis(80), Duration.ofMillis(100));
    }

    @Test
    void aPageThatRecoversReturnsItsResultAfterWaitingOnlyTheBackOffsItNeeded() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        assertThat(retryOf(intercepted, new DaemonSettings()).call(() -> {
            if (attempts.incrementAndGet() < 3) {
                throw new SQLTransientConnectionException("down", "08001");
            }
            return "page";
        })).isEqualTo("page");
        assertThat(waits).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
    }

    @Test
    void zeroRetriesMeansOneAttemptAndNoWait() {
        assertThat(attemptsOfAPageFailingWith(retryOf(intercepted, new DaemonSettings().maxTransientRetries(0)),
                new SQLTransientConnectionException("down", "08001"))).isEqualTo(1);
        assertThat(waits).isEmpty();
    }

    @Test
    void aFailureThatIsNotTransientIsNeverRetried() {
        assertThat(attemptsOfAPageFailingWith(retryOf(intercepted, new DaemonSettings()),
                new SQLException("syntax", "42000"))).isEqualTo(1);
        assertThat(waits).isEmpty();
    }
}
