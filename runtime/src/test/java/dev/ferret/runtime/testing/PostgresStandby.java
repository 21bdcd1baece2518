package dev.ferret.runtime.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL primary and a streaming hot standby of it, each a cluster of its own in a temporary directory on a
 * free port, started by the test (initdb, then {@code pg_basebackup -R} from the primary) and stopped and deleted by
 * {@link #close()}. The machine's own server is never touched. The binaries are found through {@code pg_config
 * --bindir}, else in {@value #DEBIAN_BINDIR}; initdb and postgres refuse to run as root, so under uid 0 every command
 * runs as the {@code postgres} user, owning the directory. Anything that fails throws, naming the command and its
 * output: a test that needs a standby fails, it never skips.
 */
public final class PostgresStandby implements AutoCloseable {

    static final String DEBIAN_BINDIR = "/usr/lib/postgresql/15/bin";
    private static final long COMMAND_SECONDS = 120;

    private final Path bin;
    private final Path root;
    private final boolean asPostgres;
    private final List<Path> started = new ArrayList<>();
    private int primaryPort;
    private int standbyPort;

    private PostgresStandby(Path bin, Path root, boolean asPostgres) {
        this.bin = bin;
        this.root = root;
        this.asPostgres = asPostgres;
    }

    /** Starts the primary, takes a base backup of it and starts the standby on it; cleans up what it made on failure. */
    public static PostgresStandby start() {
        Path bin = bindir();
        boolean asPostgres = "root".equals(System.getProperty("user.name"));
        Path root;
        try {
            root = Files.createTempDirectory("ferret-standby-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create the clusters' temporary directory", e);
        }
        PostgresStandby clusters = new PostgresStandby(bin, root, asPostgres);
        try {
            clusters.startBoth();
            return clusters;
        } catch (RuntimeException | Error e) {
            clusters.close();
            throw e;
        }
    }

    private void startBoth() {
        if (asPostgres) {
            run(List.of("chown", "postgres:", root.toString()), false);
        }
        Path primary = root.resolve("primary");
        Path standby = root.resolve("standby");
        primaryPort = freePort();
        run(List.of(bin.resolve("initdb").toString(), "-D", primary.toString(), "-U", "postgres", "--auth=trust",
                "-E", "UTF8"), true);
        append(primary.resolve("postgresql.conf"), "port = " + primaryPort + "\nlisten_addresses = '127.0.0.1'\n"
                + "unix_socket_directories = '" + root + "'\nwal_level = replica\nmax_wal_senders = 4\n");
        startCluster(primary);
        run(List.of(bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p", String.valueOf(primaryPort),
                "-U", "postgres", "-D", standby.toString(), "-R", "-X", "stream"), true);
        standbyPort = freePort();
        append(standby.resolve("postgresql.conf"), "port = " + standbyPort + "\nhot_standby = on\n");
        startCluster(standby);
    }

    private void startCluster(Path data) {
        run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
                root.resolve(data.getFileName() + ".log").toString(), "-w", "-t", "60", "start"), true);
        started.add(data);
    }

    /** The primary's JDBC URL (database {@code postgres}, user {@code postgres}, trust). */
    public String primaryUrl() {
        return url(primaryPort);
    }

    /** The standby's JDBC URL. */
    public String standbyUrl() {
        return url(standbyPort);
    }

    private static String url(int port) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    /** Stops both clusters (immediately: nothing in them is kept) and deletes their directory. */
    @Override
    public void close() {
        List<Path> running = new ArrayList<>(started);
        Collections.reverse(running);
        RuntimeException failure = null;
        for (Path data : running) {
            try {
                run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w",
                        "stop"), true);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        started.clear();
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new IllegalStateException("cannot delete the clusters' directory " + root, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static Path bindir() {
        try {
            Process process = new ProcessBuilder("pg_config", "--bindir").redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0
                    && Files.isExecutable(Path.of(out, "initdb"))) {
                return Path.of(out);
            }
        } catch (IOException e) {
            // no pg_config on the PATH: try the Debian location
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Path debian = Path.of(DEBIAN_BINDIR);
        if (!Files.isExecutable(debian.resolve("initdb"))) {
            throw new IllegalStateException("PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup) are needed"
                    + " to start a standby: neither `pg_config --bindir` nor " + DEBIAN_BINDIR + " has them");
        }
        return debian;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port for a test cluster", e);
        }
    }

    private static void append(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file, e);
        }
    }

    private void run(List<String> command, boolean asClusterOwner) {
        List<String> full = new ArrayList<>();
        if (asClusterOwner && asPostgres) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        try {
            Process process = new ProcessBuilder(full).redirectErrorStream(true).start();
            // read while it runs, so a chatty command never blocks on a full pipe
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", full) + " did not end within " + COMMAND_SECONDS
                        + " s: " + out);
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", full) + " failed (exit " + process.exitValue()
                        + "): " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", full), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", full), e);
        }
    }
}
