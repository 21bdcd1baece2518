package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DaemonSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        DaemonSettings settings = new DaemonSettings();
        assertThat(settings.getMode()).isEqualTo(DaemonMode.DISABLED);
        assertThat(settings.getPollingInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(settings.getStaleSequenceThreshold()).isEqualTo(Duration.ofSeconds(3));
        assertThat(settings.getBatchSize()).isEqualTo(500);
        assertThat(settings.getMaxBatchGrowth()).isEqualTo(10);
        assertThat(settings.getStopAndDrainTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(settings.isSkipApplyErrors()).isFalse();
    }

    @Test
    void invalidValuesNameTheKeyAndTheValue() {
        DaemonSettings settings = new DaemonSettings();
        assertThatThrownBy(() -> settings.pollingInterval(Duration.ZERO)).isInstanceOf(ConfigurationException.class)
                .hasMessage("daemon.polling-interval must be a positive duration, was: PT0S");
        assertThatThrownBy(() -> settings.batchSize(0)).isInstanceOf(ConfigurationException.class)
                .hasMessage("daemon.batch-size must be 1-100000, was: 0");
        assertThatThrownBy(() -> settings.maxBatchGrowth(0)).isInstanceOf(ConfigurationException.class)
                .hasMessage("daemon.max-batch-growth must be 1-1000, was: 0");
        assertThatThrownBy(() -> settings.staleSequenceThreshold(Duration.ofSeconds(-1)))
                .hasMessageContaining("daemon.stale-sequence-threshold").hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> settings.maxTransientRetries(-1)).hasMessageContaining("daemon.max-transient-retries");
    }

    @Test
    void settingsThatContradictEachOtherFailValidation() {
        DaemonSettings settings = new DaemonSettings().staleSequenceThreshold(Duration.ofSeconds(10))
                .forcedGapSkipThreshold(Duration.ofSeconds(5));
        assertThatThrownBy(settings::validate).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("daemon.forced-gap-skip-threshold (PT5S)")
                .hasMessageContaining("daemon.stale-sequence-threshold (PT10S)");
    }

    @Test
    void aProbeTimeoutNotShorterThanTheMonitoringIntervalIsRejected() {
        DaemonSettings settings = new DaemonSettings().monitoringInterval(Duration.ofSeconds(2))
                .probeTimeout(Duration.ofSeconds(2));
        assertThatThrownBy(settings::validate).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("daemon.lock.probe-timeout (PT2S)")
                .hasMessageContaining("daemon.lock.monitoring-interval (PT2S)");
        // no monitor, nothing to compare
        new DaemonSettings().monitoringInterval(Duration.ZERO).probeTimeout(Duration.ofSeconds(9)).validate();
        assertThat(new DaemonSettings().isMonitoring()).isTrue();
        new DaemonSettings().validate();
    }

    @Test
    void aProjectionNameAndVersionIsRegisteredOnce() {
        ProjectionOptions projections = new ProjectionOptions();
        projections.add(Snapshot.of("Tally", Tally.class), Lifecycle.ASYNC);
        projections.add(Snapshot.of("Tally", Tally.class).withVersion(2), Lifecycle.ASYNC);
        assertThatThrownBy(() -> projections.add(Snapshot.of("Tally", Tally.class), Lifecycle.INLINE))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("'Tally' (version 1)");
        assertThatThrownBy(() -> Snapshot.of("bad name!", Tally.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'bad name!'");
    }

    @Test
    void shardNamesCarryTheVersionAboveOne() {
        assertThat(AsyncDaemon.shardName(Snapshot.of("Trips", Tally.class))).isEqualTo("Trips:All");
        assertThat(AsyncDaemon.shardName(Snapshot.of("Trips", Tally.class).withVersion(3))).isEqualTo("Trips:V3:All");
    }
}
