package dev.ferret.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.MultiStreamProjection;
import dev.ferret.projections.Projection;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
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
 * store then catches up (timed from its creation until {@code waitForNonStaleProjectionData} returns), and each
 * variant is rebuilt {@code rebuildRuns} times with the JIT warm (the separate projections from three threads at
 * once, the composite by one call). Prints a Markdown table.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pcomposite verify -Dcomposite.args="engine=postgres"}.
 * Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code events}
 * (100000), {@code streams} (1000), {@code batch} (500), {@code growth} (10), {@code rebuildRuns} (3).
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
    private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    private CompositeBenchmark(Map<String, String> args) {
        this.url = BenchArgs.url(args, args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT), "composite");
        this.events = Integer.parseInt(args.getOrDefault("events", "100000"));
        this.streams = Integer.parseInt(args.getOrDefault("streams", "1000"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "500"));
        this.growth = Integer.parseInt(args.getOrDefault("growth", "10"));
        this.rebuildRuns = Integer.parseInt(args.getOrDefault("rebuildRuns", "3"));
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
            String engine;
            try (Connection c = ds.getConnection()) {
                DatabaseMetaData md = c.getMetaData();
                engine = md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
            }
            log("engine " + engine);
            String separate = variant(ds, "sep", false);
            String composite = variant(ds, "cmp", true);
            System.out.println();
            System.out.printf(Locale.ROOT, "%s, %,d events over %,d streams, batch %d, growth %d, %d cores, Java %s%n%n",
                    engine, events, streams, batch, growth, Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"));
            System.out.println("| variant | shards | catch-up (cold) | rebuild (warm, best) |");
            System.out.println("|---|---|---|---|");
            System.out.println("| three separate projections | 3 | " + separate + " |");
            System.out.println("| one composite of the three | 1 | " + composite + " |");
        }
    }

    /** Appends, catches up and rebuilds one variant in a schema of its own; returns its two table cells. */
    private String variant(HikariDataSource ds, String label, boolean composite) throws Exception {
        String schema = "bench_" + label + "_" + run;
        try {
            try (DocumentStore writer = store(ds, schema, DaemonMode.DISABLED, composite)) {
                append(writer);
            }
            long started = System.nanoTime();
            try (DocumentStore solo = store(ds, schema, DaemonMode.SOLO, composite)) {
                solo.waitForNonStaleProjectionData(Duration.ofMinutes(20));
                double catchUp = seconds(started);
                log(String.format(Locale.ROOT, "%s: catch-up %.2f s", label, catchUp));
                check(solo);
                double best = Double.MAX_VALUE;
                for (int r = 0; r < rebuildRuns; r++) {
                    long rebuildStarted = System.nanoTime();
                    rebuild(solo, composite);
                    double t = seconds(rebuildStarted);
                    best = Math.min(best, t);
                    log(String.format(Locale.ROOT, "%s: rebuild %d in %.2f s", label, r + 1, t));
                }
                check(solo);
                return String.format(Locale.ROOT, "%,.0f events/s (%.2f s) | %,.0f events/s (%.2f s)",
                        events / catchUp, catchUp, events / best, best);
            }
        } finally {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
        }
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
