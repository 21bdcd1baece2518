package dev.ferret.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Live aggregation of a long stream before and after compacting it, against a short stream, in one run on one
 * database: {@code aggregateStream} of a stream of {@code short} events, of one of {@code long} events, and of the
 * long one compacted through all but its last {@code short} events (so it folds a snapshot and as many events as the
 * short one), and of the long one compacted through its last version (the snapshot alone). Each is timed {@code calls} times after {@code warmup} calls; prints a Markdown table of the medians.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pcompaction verify -Dcompaction.args="engine=postgres"}.
 * Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code long} (10000),
 * {@code short} (10), {@code calls} (200), {@code warmup} (50).
 */
public final class CompactionBenchmark {

    private final String url;
    private final int longStream;
    private final int shortStream;
    private final int calls;
    private final int warmup;
    private final String schema = "bench_cpt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    private CompactionBenchmark(Map<String, String> args) {
        this.url = BenchArgs.url(args, args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT), "compaction");
        this.longStream = Integer.parseInt(args.getOrDefault("long", "10000"));
        this.shortStream = Integer.parseInt(args.getOrDefault("short", "10"));
        this.calls = Integer.parseInt(args.getOrDefault("calls", "200"));
        this.warmup = Integer.parseInt(args.getOrDefault("warmup", "50"));
    }

    public static void main(String[] argv) throws Exception {
        new CompactionBenchmark(BenchArgs.parse(argv)).run();
    }

    private void run() throws Exception {
        try (HikariDataSource ds = new HikariDataSource(BenchArgs.poolConfig("compaction", url, 4))) {
            String engine = BenchArgs.engineDescription(ds);
            double shortMs;
            double longMs;
            double compactedMs;
            double fullMs;
            try (DocumentStore store = Ferret.createStore(o -> {
                o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
                o.events().register(Tick.class);
                o.projections().add(Snapshot.of("Tally", Tally.class).create(Tick.class, Tally::create)
                        .apply(Tick.class, Tally::apply), Lifecycle.ASYNC);
                o.daemon().mode(DaemonMode.DISABLED);
            })) {
                append(store, "short", shortStream);
                append(store, "long", longStream);
                append(store, "compacted", longStream);
                append(store, "full", longStream);
                try (DocumentSession session = store.openSession()) {
                    session.events().compactStream(Tally.class, "compacted", longStream - shortStream);
                    session.events().compactStream(Tally.class, "full", longStream);
                    session.saveChanges();
                }
                check(store, "short", shortStream);
                check(store, "long", longStream);
                check(store, "compacted", longStream);
                check(store, "full", longStream);
                shortMs = medianMillis(store, "short");
                longMs = medianMillis(store, "long");
                compactedMs = medianMillis(store, "compacted");
                fullMs = medianMillis(store, "full");
            } finally {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                }
            }
            System.out.println();
            System.out.printf(Locale.ROOT, "%s, %d cores, Java %s, median of %d calls after %d%n%n", engine,
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), calls, warmup);
            System.out.println("| aggregateStream of | events read | median |");
            System.out.println("|---|---|---|");
            System.out.printf(Locale.ROOT, "| a stream of %,d events | %,d | %.3f ms |%n", shortStream, shortStream,
                    shortMs);
            System.out.printf(Locale.ROOT, "| a stream of %,d events | %,d | %.3f ms |%n", longStream, longStream,
                    longMs);
            System.out.printf(Locale.ROOT, "| that stream compacted through version %,d | %,d | %.3f ms |%n",
                    longStream - shortStream, shortStream + 1, compactedMs);
            System.out.printf(Locale.ROOT, "| that stream compacted through its last version, %,d | 1 | %.3f ms |%n",
                    longStream, fullMs);
            System.out.printf(Locale.ROOT, "%nCompacted through its last version / the short stream: %.2f;"
                    + " compacted but the last %d / uncompacted: %.3f%n", fullMs / shortMs, shortStream,
                    compactedMs / longMs);
        }
    }

    private static void append(DocumentStore store, String stream, int events) {
        for (int from = 0; from < events; from += 1000) {
            try (DocumentSession session = store.openSession()) {
                for (int i = from; i < Math.min(events, from + 1000); i++) {
                    session.events().append(stream, new Tick(i));
                }
                session.saveChanges();
            }
        }
    }

    private static void check(DocumentStore store, String stream, long expected) {
        try (QuerySession query = store.querySession()) {
            long counted = query.aggregateStream(Tally.class, stream).map(Tally::count).orElse(-1L);
            if (counted != expected) {
                throw new IllegalStateException(stream + " aggregates to " + counted + " ticks, expected " + expected);
            }
        }
    }

    private double medianMillis(DocumentStore store, String stream) {
        double[] runs = new double[calls];
        try (QuerySession query = store.querySession()) {
            for (int i = 0; i < warmup; i++) {
                query.aggregateStream(Tally.class, stream);
            }
            for (int i = 0; i < calls; i++) {
                long started = System.nanoTime();
                query.aggregateStream(Tally.class, stream);
                runs[i] = (System.nanoTime() - started) / 1e6;
            }
        }
        Arrays.sort(runs);
        return runs[calls / 2];
    }
}
