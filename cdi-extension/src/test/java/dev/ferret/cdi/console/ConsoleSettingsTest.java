package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConsoleSettingsTest {

    private static ConsoleSettings.Read read(Map<String, String> config) {
        return ConsoleSettings.read(key -> Optional.ofNullable(config.get(key)));
    }

    @Test
    void offByDefaultAtItsDefaultPathAndRoles() {
        ConsoleSettings.Read read = read(Map.of());
        assertThat(read.problems()).isEmpty();
        assertThat(read.settings()).isEqualTo(new ConsoleSettings(false, "/ferret-console", "ferret-operator",
                "ferret-viewer", true));
    }

    @Test
    void configuredValuesAreTaken() {
        ConsoleSettings.Read read = read(Map.of("ferret.console.enabled", "TRUE", "ferret.console.path", "/ops/ferret",
                "ferret.console.operator-role", "ops", "ferret.console.viewer-role", "support.read",
                "ferret.console.transport-guarantee", "NONE"));
        assertThat(read.problems()).isEmpty();
        assertThat(read.settings()).isEqualTo(new ConsoleSettings(true, "/ops/ferret", "ops", "support.read", false));
    }

    @Test
    void everyRefusedValueIsNamedWithItsKey() {
        ConsoleSettings.Read read = read(Map.of("ferret.console.enabled", "yes", "ferret.console.path", "console/",
                "ferret.console.operator-role", "ops team", "ferret.console.viewer-role", "",
                "ferret.console.transport-guarantee", "https"));
        assertThat(read.problems()).hasSize(5);
        assertThat(read.problems().get(0)).contains("ferret.console.enabled='yes'");
        assertThat(read.problems().get(1)).contains("ferret.console.path='console/'");
        assertThat(read.problems().get(2)).contains("ferret.console.operator-role='ops team'");
        assertThat(read.problems().get(3)).contains("ferret.console.viewer-role=''");
        assertThat(read.problems().get(4)).contains("ferret.console.transport-guarantee='https'")
                .contains("confidential or none");
    }

    @Test
    void pathsThatLeaveTheirSegmentOrEndInASlashAreRefused() {
        for (String path : new String[] {"/", "/a/", "/a/../b", "/..", "/a b", "//a", "/a?b"}) {
            assertThat(read(Map.of("ferret.console.path", path)).problems()).as(path).singleElement()
                    .asString().contains("ferret.console.path='" + path + "'");
        }
    }
}
