package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's quick start shows only what compiles: every line of its Java and properties blocks is a line of the
 * example under {@code docs/examples/quickstart}, which the it module compiles and QuickStartIT deploys on both
 * servers. Runs without a container.
 */
class QuickStartDocTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Path EXAMPLE = Path.of("..", "docs", "examples", "quickstart");
    private static final Pattern BLOCK = Pattern.compile("```(java|properties)\\n(.*?)```", Pattern.DOTALL);

    @Test
    void everyLineOfTheQuickStartsCodeIsALineOfTheCompiledExample() throws IOException {
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        int start = readme.indexOf("## Quick start");
        int end = readme.indexOf("\n## ", start + 1);
        assertThat(start).as("README has a Quick start section").isNotNegative();
        String section = readme.substring(start, end);
        Set<String> example;
        try (Stream<Path> files = Files.walk(EXAMPLE)) {
            example = files.filter(Files::isRegularFile).flatMap(QuickStartDocTest::lines)
                    .map(String::strip).collect(Collectors.toSet());
        }
        List<String> missing = new ArrayList<>();
        int checked = 0;
        Matcher blocks = BLOCK.matcher(section);
        while (blocks.find()) {
            for (String line : blocks.group(2).split("\n")) {
                if (!line.isBlank()) {
                    checked++;
                    if (!example.contains(line.strip())) {
                        missing.add(line.strip());
                    }
                }
            }
        }
        assertThat(checked).as("lines of code in the quick start").isGreaterThan(20);
        assertThat(missing).as("quick-start lines that are not in docs/examples/quickstart").isEmpty();
    }

    private static Stream<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8).stream();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
