package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.Setting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The README tables of settings are the declarations' rows ({@link DaemonSettings#settings()},
 * {@link FerretSettings#KEYS}), so a setting added, renamed or changed without its row fails here, naming the row.
 * No database, no container.
 */
class ReadmeTablesTest {

    @Test
    void theConfigurationKeyTableOfTheExtensionReadmeHasOneRowPerDeclaredKey() throws IOException {
        List<String> expected = new ArrayList<>();
        for (FerretSettings.Key key : FerretSettings.KEYS) {
            expected.add("| `" + key.name() + "` | " + key.values() + " | " + key.defaultValue() + " |");
        }
        assertTableMatches(Path.of("README.md"), "## Configuration keys", "| `ferret.", expected);
    }

    @Test
    void theDaemonSettingsTableOfTheMainReadmeHasOneRowPerDeclaredSetting() throws IOException {
        List<String> expected = new ArrayList<>();
        for (Setting<?> setting : DaemonSettings.settings()) {
            expected.add("| `" + setting.property() + "` | " + setting.values() + " | "
                    + readable(setting.defaultValue()) + " | " + setting.description() + " |");
        }
        assertTableMatches(Path.of("..", "docs", "guide", "daemon.md"), "| setting (`options.daemon()`)", "| `", expected);
    }

    /** Compares the rows of the first table after the line starting {@code header} by their first cell. */
    private static void assertTableMatches(Path readme, String header, String rowStart, List<String> expected)
            throws IOException {
        List<String> lines = Files.readAllLines(readme);
        int from = indexOfPrefix(lines, header);
        assertThat(from).as("header %s in %s", header, readme).isNotNegative();
        Map<String, String> actual = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : lines.subList(from, lines.size())) {
            if (line.startsWith(rowStart)) {
                inTable = true;
                actual.put(firstCell(line), line);
            } else if (inTable && !line.startsWith("|")) {
                break;
            }
        }
        Map<String, String> wanted = new LinkedHashMap<>();
        expected.forEach(row -> wanted.put(firstCell(row), row));
        List<String> problems = new ArrayList<>();
        wanted.forEach((cell, row) -> {
            String found = actual.get(cell);
            if (found == null) {
                problems.add("missing row " + row);
            } else if (!found.equals(row)) {
                problems.add("different row " + cell + ":\n  README:   " + found + "\n  declared: " + row);
            }
        });
        actual.keySet().stream().filter(cell -> !wanted.containsKey(cell))
                .forEach(cell -> problems.add("extra row (no declaration) " + actual.get(cell)));
        assertThat(problems).as("the rows of %s against the declarations; the declared rows are:%n%s", readme,
                String.join("\n", expected)).isEmpty();
    }

    private static int indexOfPrefix(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i + 1;
            }
        }
        return -1;
    }

    private static String firstCell(String row) {
        return row.substring(1, row.indexOf(" |", 2)).trim();
    }

    /** A default as the daemon guide shows it: 500 ms, 3 s, 2 min, 1 h. */
    private static String readable(Object value) {
        if (value instanceof Duration d) {
            if (d.toMillis() < 1000 || d.toMillis() % 1000 != 0) {
                return d.toMillis() + " ms";
            }
            long seconds = d.toSeconds();
            if (seconds < 60 || seconds % 60 != 0) {
                return seconds + " s";
            }
            return seconds < 3600 || seconds % 3600 != 0 ? seconds / 60 + " min" : seconds / 3600 + " h";
        }
        return value instanceof DaemonMode mode ? "`" + mode + "`" : Objects.toString(value);
    }
}
