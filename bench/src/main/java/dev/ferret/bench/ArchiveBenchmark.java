package dev.ferret.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StreamArchived;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What archiving saves a rebuild, in one run on one database and schema: {@code events} ticks over {@code streams}
 * streams are appended with the daemon disabled, a SOLO store catches its {@link Tally} snapshot up, and the
 * projection is rebuilt {@code rebuildRuns} times; then {@code archived} percent of the streams are archived (timed:
 * streams archived a second, {@code perSave} to a save) and the projection is rebuilt {@code rebuildRuns} times again.
 * The ticks each rebuild applied are counted, so the table shows what was read as well as how long it took. Prints a
 * Markdown table.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Parchive verify -Darchive.args="engine=postgres"}.
 * Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code events}
 * (1000000), {@code streams} (10000), {@code archived} (50), {@code perSave} (100), {@code rebuildRuns} (3),
 * {@code batch} (500), {@code growth} (10).
 */
public final class ArchiveBenchmark {

    /** Ticks applied by the Tally shard since the last reset. */
    private static final AtomicLong APPLIED = new AtomicLong();

    private final String url;
    private final int events;
    private final int streams;
    private final int archivedPercent;
    private final int perSave;
    private final int rebuildRuns;
    private final int batch;
    private final int growth;
    private final String schema = "bench_arc_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    private ArchiveBenchmark(Map<String, String> args) {
        this.url = BenchArgs.url(args, args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT), "archive");
        this.events = Integer.parseInt(args.getOrDefault("events", "1000000"));
        this.streams = Integer.parseInt(args.getOrDefault("streams", "10000"));
        this.archivedPercent = Integer.parseInt(args.getOrDefault("archived", "50"));
        this.perSave = Integer.parseInt(args.getOrDefault("perSave", "100"));
        this.rebuildRuns = Integer.parseInt(args.getOrDefault("rebuildRuns", "3"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "500"));
        this.growth = Integer.parseInt(args.getOrDefault("growth", "10"));
    }

    public static void main(String[] argv) throws Exception {
        new ArchiveBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[archive %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private void run() throws Exception {
        try (HikariDataSource ds = new HikariDataSource(BenchArgs.poolConfig("archive", url, 8))) {
            String engine = BenchArgs.engineDescription(ds);
            log("engine " + engine);
            List<Double> live = new ArrayList<>();
            List<Double> afterArchiving = new ArrayList<>();
            long appliedLive;
            long appliedAfter;
            double archiveSeconds;
            int archivedStreams = streams * archivedPercent / 100;
            try {
                try (DocumentStore writer = store(ds, DaemonMode.DISABLED)) {
                    long started = System.nanoTime();
                    append(writer);
                    log(String.format(Locale.ROOT, "appended %,d events in %.1f s", events, seconds(started)));
                }
                try (DocumentStore store = store(ds, DaemonMode.SOLO)) {
                    store.waitForNonStaleProjectionData(Duration.ofMinutes(30));
                    appliedLive = timedRebuilds(store, live);
                    long started = System.nanoTime();
                    archive(store, archivedStreams);
                    archiveSeconds = seconds(started);
                    log(String.format(Locale.ROOT, "archived %,d streams in %.1f s", archivedStreams, archiveSeconds));
                    store.waitForNonStaleProjectionData(Duration.ofMinutes(30));
                    appliedAfter = timedRebuilds(store, afterArchiving);
                    check(store, archivedStreams);
                }
            } finally {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                }
            }
            double before = median(live);
            double after = median(afterArchiving);
            System.out.println();
            System.out.printf(Locale.ROOT, "%s, %,d events over %,d streams, batch %d, growth %d, %d cores, Java %s%n%n",
                    engine, events, streams, batch, growth, Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"));
            System.out.println("| rebuild of Tally | events applied | median of " + rebuildRuns + " | best |");
            System.out.println("|---|---|---|---|");
            System.out.printf(Locale.ROOT, "| nothing archived | %,d | %.2f s | %.2f s |%n", appliedLive, before,
                    best(live));
            System.out.printf(Locale.ROOT, "| %d%% of the streams archived | %,d | %.2f s | %.2f s |%n",
                    archivedPercent, appliedAfter, after, best(afterArchiving));
            System.out.printf(Locale.ROOT, "%nRebuild time after archiving / before: %.2f (medians). Archiving: %,.0f"
                    + " streams a second, %d to a save.%n", after / before, archivedStreams / archiveSeconds, perSave);
        }
    }

    private DocumentStore store(HikariDataSource ds, DaemonMode mode) {
        return Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class);
            o.projections().add(Snapshot.of("Tally", Tally.class)
                    .create(Tick.class, (String id, Tick tick) -> {
                        APPLIED.incrementAndGet();
                        return Tally.create(id, tick);
                    })
                    .apply(Tick.class, (tally, tick) -> {
                        APPLIED.incrementAndGet();
                        return Tally.apply(tally, tick);
                    })
                    .deleteOn(StreamArchived.class), Lifecycle.ASYNC);
            o.daemon().mode(mode).pollingInterval(Duration.ofMillis(100)).batchSize(batch).maxBatchGrowth(growth);
        });
    }

    private void append(DocumentStore writer) {
        for (int from = 0; from < events; from += 1000) {
            try (DocumentSession session = writer.openSession()) {
                for (int i = from; i < Math.min(events, from + 1000); i++) {
                    session.events().append("stream-" + i % streams, new Tick(i));
                }
                session.saveChanges();
            }
        }
    }

    /** Archives every other stream until {@code count} are, {@code perSave} to a save. */
    private void archive(DocumentStore store, int count) {
        int step = Math.max(1, streams / Math.max(1, count));
        int done = 0;
        for (int s = 0; done < count; ) {
            try (DocumentSession session = store.openSession()) {
                for (int i = 0; i < perSave && done < count; i++, s += step, done++) {
                    session.events().archiveStream("stream-" + s);
                }
                session.saveChanges();
            }
        }
    }

    /** Rebuilds {@code rebuildRuns} times, adding each run's seconds; returns the ticks the last run applied. */
    private long timedRebuilds(DocumentStore store, List<Double> runs) {
        long applied = 0;
        for (int r = 0; r < rebuildRuns; r++) {
            APPLIED.set(0);
            long started = System.nanoTime();
            store.daemon().rebuild("Tally", Duration.ofMinutes(30));
            runs.add(seconds(started));
            applied = APPLIED.get();
            log(String.format(Locale.ROOT, "rebuild %d: %.2f s, %,d ticks applied", r + 1, runs.get(r), applied));
        }
        return applied;
    }

    /** The first archived stream has no document; stream-1, live when at most half are archived, counts its ticks. */
    private void check(DocumentStore store, int archivedStreams) {
        try (QuerySession query = store.querySession()) {
            if (archivedStreams > 0 && query.load(Tally.class, "stream-0").isPresent()) {
                throw new IllegalStateException("stream-0 was archived but still has its document");
            }
            if (archivedStreams * 2 <= streams) {
                long expected = events / streams + (1 < events % streams ? 1 : 0);
                long counted = query.load(Tally.class, "stream-1").map(Tally::count).orElse(-1L);
                if (counted != expected) {
                    throw new IllegalStateException("stream-1 counted " + counted + " ticks, expected " + expected);
                }
            }
        }
    }

    private static double median(List<Double> runs) {
        List<Double> sorted = runs.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static double best(List<Double> runs) {
        return runs.stream().min(Double::compare).orElseThrow();
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }
}
