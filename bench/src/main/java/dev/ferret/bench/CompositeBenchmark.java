package dev.ferret.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.Projection;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A composite of three members against the same three projections registered separately, over the same events:
 * a {@link Tally} snapshot per stream, a {@link Bucket} multi-stream projection over 100 buckets, and one
 * {@link Total}. Each variant gets its own schema holding the same events, appended with the daemon disabled; a SOLO
 * store of each then catches up (timed from its creation until {@code waitForNonStaleProjectionData} returns), and
 * both are rebuilt {@code rebuildRuns} times, alternating, with the JIT warm (the separate projections from three
 * threads at once, the composite by one call). Prints a Markdown table.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pcomposite verify -Dcomposite.args="engine=postgres"}.
 * Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code events}
 * (100000), {@code streams} (1000), {@code batch} (500), {@code growth} (10), {@code rebuildRuns} (5), {@code first}
 * (separate | composite: which variant catches up first, and so also warms the JIT for the other).
 */
public final class CompositeBenchmark {

    private static final int BUCKETS = 100;

    /** A document of the multi-stream member: ticks of every stream hashed to the bucket. Public, for JSON-B. */
    public record Bucket(String id, long count) {
    }

    /** The document of the third member: every tick. Public, for JSON-B. */
    public record Total(String id, long count) {
    }

    private final String url;
    private final int events;
    private final int streams;
    private final int batch;
    private final int growth;
    private final int rebuildRuns;
    private final boolean compositeFirst;
    private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    private CompositeBenchmark(Map<String, String> args) {
        this.url = BenchArgs.url(args, args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT), "composite");
        this.events = Integer.parseInt(args.getOrDefault("events", "100000"));
        this.streams = Integer.parseInt(args.getOrDefault("streams", "1000"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "500"));
        this.growth = Integer.parseInt(args.getOrDefault("growth", "10"));
        this.rebuildRuns = Integer.parseInt(args.getOrDefault("rebuildRuns", "5"));
        this.compositeFirst = args.getOrDefault("first", "separate").equals("composite");
    }

    public static void main(String[] argv) throws Exception {
        new CompositeBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[composite %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private static List<Projection> members() {
        return List.of(
                Snapshot.of("Tally", Tally.class).create(Tick.class, Tally::create).apply(Tick.class, Tally::apply),
                MultiStreamProjection.of("Buckets", Bucket.class)
                        .identity(Tick.class, tick -> "bucket-" + tick.n() % BUCKETS)
                        .create(Tick.class, (id, tick) -> new Bucket(id, 1))
                        .apply(Tick.class, (bucket, tick) -> new Bucket(bucket.id(), bucket.count() + 1)),
                MultiStreamProjection.of("Totals", Total.class)
                        .identity(Tick.class, tick -> "all")
                        .create(Tick.class, (id, tick) -> new Total(id, 1))
                        .apply(Tick.class, (total, tick) -> new Total(total.id(), total.count() + 1)));
    }

    private void run() throws Exception {
        try (HikariDataSource ds = new HikariDataSource(BenchArgs.poolConfig("composite", url, 12))) {
            String engine = BenchArgs.engineDescription(ds);
            log("engine " + engine);
            String separateSchema = "bench_sep_" + run;
            String compositeSchema = "bench_cmp_" + run;
            List<Double> separateRuns = new ArrayList<>();
            List<Double> compositeRuns = new ArrayList<>();
            double separateCatchUp;
            double compositeCatchUp;
            try {
                for (String schema : List.of(separateSchema, compositeSchema)) {
                    try (DocumentStore writer = store(ds, schema, DaemonMode.DISABLED, schema.equals(compositeSchema))) {
                        append(writer);
                    }
                }
                // the first catch-up also warms the JIT for the second: first=composite swaps them
                long started = System.nanoTime();
                DocumentStore first = store(ds, compositeFirst ? compositeSchema : separateSchema, DaemonMode.SOLO,
                        compositeFirst);
                first.waitForNonStaleProjectionData(Duration.ofMinutes(20));
                double firstCatchUp = seconds(started);
                started = System.nanoTime();
                DocumentStore second = store(ds, compositeFirst ? separateSchema : compositeSchema, DaemonMode.SOLO,
                        !compositeFirst);
                second.waitForNonStaleProjectionData(Duration.ofMinutes(20));
                double secondCatchUp = seconds(started);
                try (DocumentStore separate = compositeFirst ? second : first;
                     DocumentStore composite = compositeFirst ? first : second) {
                    separateCatchUp = compositeFirst ? secondCatchUp : firstCatchUp;
                    compositeCatchUp = compositeFirst ? firstCatchUp : secondCatchUp;
                    check(separate);
                    check(composite);
                    // rebuilds alternate, so that neither variant always runs on the other's warm caches
                    for (int r = 0; r < rebuildRuns; r++) {
                        separateRuns.add(timedRebuild(separate, false));
                        compositeRuns.add(timedRebuild(composite, true));
                        log(String.format(Locale.ROOT, "rebuild %d: separate %.2f s, composite %.2f s", r + 1,
                                separateRuns.get(r), compositeRuns.get(r)));
                    }
                    check(separate);
                    check(composite);
                }
            } finally {
                for (String schema : List.of(separateSchema, compositeSchema)) {
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                    }
                }
            }
            System.out.println();
            System.out.printf(Locale.ROOT, "%s, %,d events over %,d streams, batch %d, growth %d, %d cores, Java %s,"
                    + " %s caught up first%n%n", engine, events, streams, batch, growth,
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                    compositeFirst ? "composite" : "separate");
            System.out.println("| variant | shards | catch-up (cold) | rebuild, median of " + rebuildRuns
                    + " (alternating) | rebuild, best |");
            System.out.println("|---|---|---|---|---|");
            System.out.println("| three separate projections | 3 | " + cells(separateCatchUp, separateRuns) + " |");
            System.out.println("| one composite of the three | 1 | " + cells(compositeCatchUp, compositeRuns) + " |");
        }
    }

    private String cells(double catchUp, List<Double> rebuilds) {
        List<Double> sorted = rebuilds.stream().sorted().toList();
        double median = sorted.get(sorted.size() / 2);
        double best = sorted.get(0);
        return String.format(Locale.ROOT, "%,.0f events/s (%.2f s) | %,.0f events/s (%.2f s) | %,.0f events/s (%.2f s)",
                events / catchUp, catchUp, events / median, median, events / best, best);
    }

    private double timedRebuild(DocumentStore store, boolean composite) throws Exception {
        long started = System.nanoTime();
        rebuild(store, composite);
        return seconds(started);
    }

    private DocumentStore store(HikariDataSource ds, String schema, DaemonMode mode, boolean composite) {
        return Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class);
            if (composite) {
                o.projections().add(CompositeProjection.named("Three").stage(members().toArray(Projection[]::new)),
                        Lifecycle.ASYNC);
            } else {
                members().forEach(member -> o.projections().add(member, Lifecycle.ASYNC));
            }
            o.daemon().mode(mode).pollingInterval(Duration.ofMillis(100)).batchSize(batch).maxBatchGrowth(growth)
                    .workerThreads(3);
        });
    }

    private void append(DocumentStore writer) {
        for (int from = 0; from < events; from += 100) {
            try (DocumentSession session = writer.openSession()) {
                for (int i = from; i < Math.min(events, from + 100); i++) {
                    session.events().append("stream-" + i % streams, new Tick(i));
                }
                session.saveChanges();
            }
        }
    }

    private static void rebuild(DocumentStore store, boolean composite) throws Exception {
        if (composite) {
            store.daemon().rebuild("Three", Duration.ofMinutes(20));
            return;
        }
        ExecutorService callers = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (String name : List.of("Tally", "Buckets", "Totals")) {
                calls.add(callers.submit(() -> {
                    store.daemon().rebuild(name, Duration.ofMinutes(20));
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get();
            }
        } finally {
            callers.shutdownNow();
        }
    }

    /** A fast wrong run must not look good: every member's documents add up to the events. */
    private void check(DocumentStore store) {
        try (QuerySession session = store.querySession()) {
            long total = session.load(Total.class, "all").orElseThrow().count();
            long bucket = session.load(Bucket.class, "bucket-0").orElseThrow().count();
            long tally = session.load(Tally.class, "stream-0").orElseThrow().count();
            if (total != events || bucket != events / BUCKETS || tally != events / streams) {
                throw new IllegalStateException("wrong documents: total " + total + ", bucket-0 " + bucket
                        + ", stream-0 " + tally);
            }
        }
    }

    private static double seconds(long started) {
        return (System.nanoTime() - started) / 1e9;
    }
}
