package dev.ferret.it;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The Chromium-based browser and chromedriver build/ensure-chromium.sh found (or installed) before the tests, read from
 * the file the build names in {@code it.browser.file}.
 */
record Browser(Path chromium, Path chromedriver) {

    static Browser found() throws IOException {
        String file = System.getProperty("it.browser.file");
        if (file == null) {
            throw new IllegalStateException("it.browser.file is not set: run the browser tests through the it module's"
                    + " build, which finds the browser first (build/ensure-chromium.sh)");
        }
        Properties paths = new Properties();
        try (Reader reader = Files.newBufferedReader(Path.of(file))) {
            paths.load(reader);
        }
        return new Browser(Path.of(paths.getProperty("chromium")), Path.of(paths.getProperty("chromedriver")));
    }
}
