package dev.ferret.runtime.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one back-off every waiter uses. Runs without a database. */
class BackoffTest {

    private static final Duration MS_100 = Duration.ofMillis(100);

    @Test
    void eachWaitDoublesTheLastUpToTheMaximum() {
        Backoff.Attempts waits = new Backoff(MS_100, Duration.ofMillis(500)).attempts();

        assertThat(waits.next()).isEqualTo(MS_100);
        assertThat(waits.next()).isEqualTo(Duration.ofMillis(200));
        assertThat(waits.next()).isEqualTo(Duration.ofMillis(400));
        assertThat(waits.next()).isEqualTo(Duration.ofMillis(500));
        assertThat(waits.next()).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void aResetStartsTheStreakOver() {
        Backoff.Attempts waits = new Backoff(MS_100, Duration.ofSeconds(5)).attempts();
        waits.next();
        waits.next();

        waits.reset();

        assertThat(waits.next()).isEqualTo(MS_100);
    }

    @Test
    void aFirstWaitAboveTheMaximumIsWaitedOnceThenTheMaximum() {
        Backoff.Attempts waits = new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).attempts();

        assertThat(waits.next()).isEqualTo(Duration.ofSeconds(2));
        assertThat(waits.next()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void theNumberedDelayOfRetriesIsTheSameSequenceAsAStreak() {
        Backoff backoff = new Backoff(MS_100, Duration.ofMillis(700));
        Backoff.Attempts waits = backoff.attempts();

        for (int attempt = 1; attempt <= 6; attempt++) {
            assertThat(backoff.delay(attempt)).as("attempt %d", attempt).isEqualTo(waits.next());
        }
    }
}
