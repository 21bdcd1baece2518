package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** On virtual nanos: the rates follow the samples, never the wall clock. */
class ShardRatesTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void theRateIsTheProgressOverTheLastMinuteSampledOnceASecondAtMost() {
        ShardRates rates = new ShardRates();
        assertThat(rates.sample("s", 0, 0).perSecond()).isZero();
        // within the same second: not a sample of its own
        assertThat(rates.sample("s", 50, SECOND / 2).perSecond()).isZero();
        ShardRates.Rate rate = rates.sample("s", 100, SECOND);
        assertThat(rate.perSecond()).isCloseTo(100, within(1e-9));
        for (int i = 2; i <= 120; i++) {
            rate = rates.sample("s", 100L * i + (i > 90 ? 1000L * (i - 90) : 0), i * SECOND);
        }
        // the last 60 s: 100/s plus 1000/s for the last 30 s
        assertThat(rate.perSecond()).isCloseTo(100 + 1000 * 30 / 60.0, within(1e-6));
        assertThat(rate.history()).hasSize(60).endsWith(1100.0);
        assertThat(rate.history().get(0)).isEqualTo(100.0);
    }

    @Test
    void aProgressionThatWentBackStartsTheWindowAgain() {
        ShardRates rates = new ShardRates();
        rates.sample("s", 1000, 0);
        rates.sample("s", 2000, SECOND);
        assertThat(rates.sample("s", 10, 2 * SECOND).perSecond()).isZero();
        assertThat(rates.sample("s", 510, 3 * SECOND).perSecond()).isCloseTo(500, within(1e-9));
    }

    @Test
    void shardsNoLongerReportedAreForgotten() {
        ShardRates rates = new ShardRates();
        rates.sample("gone", 0, 0);
        rates.sample("kept", 0, 0);
        rates.retain(Set.of("kept"));
        rates.sample("gone", 100, SECOND);
        assertThat(rates.sample("gone", 100, SECOND).perSecond()).isZero();
        assertThat(rates.sample("kept", 100, SECOND).perSecond()).isCloseTo(100, within(1e-9));
    }
}
