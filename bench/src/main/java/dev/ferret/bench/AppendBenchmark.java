package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.Ferret;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What tenant-partitioned events cost the writers: append throughput and save latency with
 * {@code events().partitionByTenant} off and on, with every writer in one tenant (they all draw numbers from the
 * same sequence row, so their transactions serialize on it) and with each writer in a tenant of its own.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pappend verify -Dappend.args="engine=postgres"}.
 * Arguments are space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code writers}
 * (4), {@code saves} (saveChanges per writer, 400), {@code perSave} (events per save, 10), {@code streamsPerSave}
 * (the streams a save's events are spread over, 1), {@code rounds} (5; the best round is reported, after one warm-up
 * round).
 */
public final class AppendBenchmark {

    private final String url;
    private final int writers;
    private final int saves;
    private final int perSave;
    private final int streamsPerSave;
    private final int rounds;

    private AppendBenchmark(Map<String, String> args) {
        String engine = args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT);
        this.url = BenchArgs.url(args, engine, "append");
        this.writers = Integer.parseInt(args.getOrDefault("writers", "4"));
        this.saves = Integer.parseInt(args.getOrDefault("saves", "400"));
        this.perSave = Integer.parseInt(args.getOrDefault("perSave", "10"));
        this.streamsPerSave = Integer.parseInt(args.getOrDefault("streamsPerSave", "1"));
        if (streamsPerSave < 1 || perSave % streamsPerSave != 0) {
            throw new IllegalArgumentException("perSave must be a multiple of streamsPerSave");
        }
        this.rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
    }

    public static void main(String[] argv) throws Exception {
        new AppendBenchmark(BenchArgs.parse(argv)).run();
    }

    /** One measured configuration. */
    private record Result(boolean partitioned, int tenants, double eventsPerSecond, double p50Millis,
                          double p99Millis) {
    }

    private void run() throws Exception {
        HikariConfig config = BenchArgs.poolConfig("append-bench", url, writers + 2);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            String engine;
            try (Connection c = ds.getConnection()) {
                DatabaseMetaData md = c.getMetaData();
                engine = md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
            }
            measure(ds, false, 1); // warm-up: JIT, pool, server caches
            List<Result> results = new ArrayList<>();
            for (boolean partitioned : new boolean[] {false, true}) {
                for (int tenants : new int[] {1, writers}) {
                    Result best = null;
                    for (int round = 0; round < rounds; round++) {
                        Result r = measure(ds, partitioned, tenants);
                        if (best == null || r.eventsPerSecond() > best.eventsPerSecond()) {
                            best = r;
                        }
                    }
                    results.add(best);
                }
            }
            System.out.printf(Locale.ROOT, "%nAppends on %s: %d writers, %d saves of %d events in %d streams each,"
                            + " %d cores, Java %s (best of %d rounds)%n%n", engine, writers, saves, perSave, streamsPerSave,
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), rounds);
            System.out.println("| partitionByTenant | writers' tenants | events/s | save p50 | save p99 |");
            System.out.println("|---|---|---|---|---|");
            for (Result r : results) {
                System.out.printf(Locale.ROOT, "| %s | %s | %,.0f | %.1f ms | %.1f ms |%n",
                        r.partitioned() ? "on" : "off", r.tenants() == 1 ? "all in one" : "one each",
                        r.eventsPerSecond(), r.p50Millis(), r.p99Millis());
            }
        }
    }

    private Result measure(HikariDataSource ds, boolean partitioned, int tenants) throws Exception {
        String schema = "append_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        try (DocumentStore store = Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class).partitionByTenant(partitioned);
            o.daemon().mode(DaemonMode.DISABLED);
        })) {
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            CyclicBarrier start = new CyclicBarrier(writers + 1);
            try {
                // each writer fills its own slice; Future.get publishes it to this thread
                long[] nanos = new long[writers * saves];
                List<Future<?>> done = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String tenant = "tenant-" + (w % tenants);
                    String stream = "writer-" + w;
                    int slice = w * saves;
                    done.add(pool.submit(() -> {
                        start.await(60, TimeUnit.SECONDS);
                        for (int s = 0; s < saves; s++) {
                            List<Tick> ticks = new ArrayList<>(perSave);
                            for (int e = 0; e < perSave; e++) {
                                ticks.add(new Tick(s * perSave + e));
                            }
                            int perStream = perSave / streamsPerSave;
                            long began = System.nanoTime();
                            try (DocumentSession session = store.openSession(tenant)) {
                                for (int k = 0; k < streamsPerSave; k++) {
                                    session.events().append(streamsPerSave == 1 ? stream : stream + "-" + k,
                                            ticks.subList(k * perStream, (k + 1) * perStream));
                                }
                                session.saveChanges();
                            }
                            nanos[slice + s] = System.nanoTime() - began;
                        }
                        return null;
                    }));
                }
                start.await(60, TimeUnit.SECONDS);
                long began = System.nanoTime();
                for (Future<?> f : done) {
                    f.get(10, TimeUnit.MINUTES);
                }
                double seconds = (System.nanoTime() - began) / 1e9;
                Arrays.sort(nanos);
                return new Result(partitioned, tenants, writers * (double) saves * perSave / seconds,
                        nanos[nanos.length / 2] / 1e6, nanos[(int) (nanos.length * 0.99)] / 1e6);
            } finally {
                pool.shutdownNow();
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA " + schema + " CASCADE");
                }
            }
        }
    }
}
