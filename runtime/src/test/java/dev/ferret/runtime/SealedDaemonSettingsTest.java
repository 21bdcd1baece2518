package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Daemon settings are validated, copied and sealed when a store starts, as HikariCP seals its configuration: the
 * store runs on its own copy, and the object the application configured refuses changes instead of silently not
 * applying them. Runs on embedded H2 with the daemon disabled.
 */
class SealedDaemonSettingsTest {

    @Test
    void afterTheStoreStartedTheConfiguredSettingsRefuseChangesNamingTheSetting() {
        StoreOptions options = new StoreOptions().applyAllDatabaseChangesOnStartup(true);
        options.daemon().batchSize(50);
        try (DocumentStore store = Ferret.createStore(options)) {
            assertThat(options.daemon().isSealed()).isTrue();
            assertThatThrownBy(() -> options.daemon().batchSize(10))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("batchSize (daemon.batch-size) to 10")
                    .hasMessageContaining("sealed");
            assertThat(options.daemon().getBatchSize()).isEqualTo(50);
        }
    }

    @Test
    void theStoreRunsOnASealedCopyWithEveryValueOfTheOriginal() {
        DaemonSettings configured = new DaemonSettings().batchSize(50).mode(DaemonMode.DISABLED);
        DaemonSettings copy = configured.sealForStart();
        assertThat(copy).isNotSameAs(configured);
        assertThat(copy.getBatchSize()).isEqualTo(50);
        assertThat(copy.isSealed()).isTrue();
        assertThatThrownBy(() -> copy.pollingInterval(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("pollingInterval");
        for (var setting : DaemonSettings.settings()) {
            assertThat((Object) copy.get(setting)).as(setting.toString()).isEqualTo(configured.get(setting));
        }
    }

    @Test
    void settingsThatDisagreeAreRefusedAtStartAndTheOriginalStaysOpen() {
        DaemonSettings configured = new DaemonSettings().staleSequenceThreshold(Duration.ofMinutes(10))
                .forcedGapSkipThreshold(Duration.ofMinutes(1));
        assertThatThrownBy(configured::sealForStart).isInstanceOf(ConfigurationException.class);
        assertThat(configured.isSealed()).isFalse();
        configured.forcedGapSkipThreshold(Duration.ofMinutes(20));
    }
}
