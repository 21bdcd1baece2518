package dev.ferret.bench;

import com.sun.management.OperatingSystemMXBean;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.StatusSummary;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.BiFunction;

/**
 * The reference system's shape on one node: {@code tenants} tenants with tenant-partitioned events spread over
 * {@code databases} databases, {@code projections} async snapshot projections, so tenants x projections shards.
 * Reports the first start (a store opened over one event in every tenant, until every shard has applied it), what
 * status, summary, a page and one shard cost at that size, a burst of {@code burst} events in every tenant until every
 * shard has applied it (then checks every document of a sample of tenants), {@code close()}, and the warm start: the
 * store opened again over the caught-up shards, until it is non-stale.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pscale verify [-Dscale.args="tenants=2100 ..."]}.
 *
 * <p>Arguments, space-separated {@code key=value}: {@code engine} (postgres | h2), {@code url} (the first database;
 * the others are created beside it, {@code <name>_scale_<i>}, and dropped after), {@code tenants} (2100),
 * {@code databases} (16), {@code projections} (22, at most 22), {@code burst} (5), {@code polling} in ms (100),
 * {@code workers} (8), {@code pool} connections per database (4), {@code sharedLoads} (16 MiB; 0 off),
 * {@code sharedTransactions} (false), {@code asyncCommits} (daemon asyncPageCommits, true), {@code statusCalls} (50), {@code sample} tenants
 * checked after the burst (50), {@code idleSeconds} measured idle (10).
 */
public final class ScaleBenchmark {

    /** What every projection's document is: an id and how many events it counted. */
    public interface Counted {
        String id();

        int n();
    }

    // one document type per projection: each projection writes a table of its own. Public, for JSON-B.
    public record D01(String id, int n) implements Counted { }
    public record D02(String id, int n) implements Counted { }
    public record D03(String id, int n) implements Counted { }
    public record D04(String id, int n) implements Counted { }
    public record D05(String id, int n) implements Counted { }
    public record D06(String id, int n) implements Counted { }
    public record D07(String id, int n) implements Counted { }
    public record D08(String id, int n) implements Counted { }
    public record D09(String id, int n) implements Counted { }
    public record D10(String id, int n) implements Counted { }
    public record D11(String id, int n) implements Counted { }
    public record D12(String id, int n) implements Counted { }
    public record D13(String id, int n) implements Counted { }
    public record D14(String id, int n) implements Counted { }
    public record D15(String id, int n) implements Counted { }
    public record D16(String id, int n) implements Counted { }
    public record D17(String id, int n) implements Counted { }
    public record D18(String id, int n) implements Counted { }
    public record D19(String id, int n) implements Counted { }
    public record D20(String id, int n) implements Counted { }
    public record D21(String id, int n) implements Counted { }
    public record D22(String id, int n) implements Counted { }

    private record Kind<T extends Counted>(Class<T> type, BiFunction<String, Integer, T> make) {
        Snapshot<T> projection(String name) {
            return Snapshot.of(name, type)
                    .create(Tick.class, (id, e) -> make.apply(id, 1))
                    .apply(Tick.class, (doc, e) -> make.apply(doc.id(), doc.n() + 1));
        }
    }

    private static final List<Kind<?>> KINDS = List.of(new Kind<>(D01.class, D01::new),
            new Kind<>(D02.class, D02::new), new Kind<>(D03.class, D03::new), new Kind<>(D04.class, D04::new),
            new Kind<>(D05.class, D05::new), new Kind<>(D06.class, D06::new), new Kind<>(D07.class, D07::new),
            new Kind<>(D08.class, D08::new), new Kind<>(D09.class, D09::new), new Kind<>(D10.class, D10::new),
            new Kind<>(D11.class, D11::new), new Kind<>(D12.class, D12::new), new Kind<>(D13.class, D13::new),
            new Kind<>(D14.class, D14::new), new Kind<>(D15.class, D15::new), new Kind<>(D16.class, D16::new),
            new Kind<>(D17.class, D17::new), new Kind<>(D18.class, D18::new), new Kind<>(D19.class, D19::new),
            new Kind<>(D20.class, D20::new), new Kind<>(D21.class, D21::new), new Kind<>(D22.class, D22::new));

    private final Map<String, String> args;
    private final String engine;
    private final int tenants;
    private final int databases;
    private final int projections;
    private final int burst;
    private final Duration polling;
    private final int workers;
    private final int pool;
    /** {@code sharedLoads}: the shared load cache in MiB, 0 off. */
    private final int sharedLoadMegabytes;
    /** {@code sharedTransactions}: whether ready pages of a database commit together. */
    private final boolean sharedTransactions;
    private final boolean asyncCommits;
    private final int statusCalls;
    private final int sample;
    private final int idleSeconds;
    private final String schema = "scale_" + UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, String> results = new LinkedHashMap<>();

    private ScaleBenchmark(Map<String, String> args) {
        this.args = args;
        this.engine = args.getOrDefault("engine", "postgres").toLowerCase(Locale.ROOT);
        this.tenants = Integer.parseInt(args.getOrDefault("tenants", "2100"));
        this.databases = Integer.parseInt(args.getOrDefault("databases", "16"));
        this.projections = Integer.parseInt(args.getOrDefault("projections", "22"));
        this.burst = Integer.parseInt(args.getOrDefault("burst", "5"));
        this.polling = Duration.ofMillis(Long.parseLong(args.getOrDefault("polling", "100")));
        this.workers = Integer.parseInt(args.getOrDefault("workers", "8"));
        this.pool = Integer.parseInt(args.getOrDefault("pool", "4"));
        this.sharedLoadMegabytes = Integer.parseInt(args.getOrDefault("sharedLoads", "16"));
        this.sharedTransactions = Boolean.parseBoolean(args.getOrDefault("sharedTransactions", "false"));
        this.asyncCommits = Boolean.parseBoolean(args.getOrDefault("asyncCommits", "true"));
        this.statusCalls = Integer.parseInt(args.getOrDefault("statusCalls", "50"));
        this.sample = Integer.parseInt(args.getOrDefault("sample", "50"));
        this.idleSeconds = Integer.parseInt(args.getOrDefault("idleSeconds", "10"));
        if (projections < 1 || projections > KINDS.size()) {
            throw new IllegalArgumentException("projections must be 1 to " + KINDS.size() + ", was " + projections);
        }
        if (databases < 1 || databases > tenants) {
            throw new IllegalArgumentException("databases must be 1 to tenants (" + tenants + "), was " + databases);
        }
    }

    public static void main(String[] argv) throws Exception {
        new ScaleBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[scale %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private String tenant(int i) {
        return String.format(Locale.ROOT, "tenant-%05d", i);
    }

    private void run() throws Exception {
        String mainUrl = BenchArgs.url(args, engine, "scale_0");
        List<HikariDataSource> pools = new ArrayList<>();
        List<String> created = new ArrayList<>();
        try {
            pools.add(new HikariDataSource(BenchArgs.poolConfig("scale-0", mainUrl, pool)));
            for (int d = 1; d < databases; d++) {
                String url = siblingUrl(mainUrl, d, pools.get(0), created);
                pools.add(new HikariDataSource(BenchArgs.poolConfig("scale-" + d, url, pool)));
            }
            String description = BenchArgs.engineDescription(pools.get(0));
            log(description + ": " + tenants + " tenants over " + databases + " databases, " + projections
                    + " projections, " + (tenants * projections) + " shards, schema " + schema);
            measure(pools);
            print(description);
        } finally {
            for (HikariDataSource ds : pools) {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute(engine.equals("h2") ? "DROP SCHEMA " + schema + " CASCADE"
                            : "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                } catch (Exception e) {
                    log("could not drop the schema: " + e);
                }
                ds.close();
            }
            if (!created.isEmpty()) {
                try (HikariDataSource admin = new HikariDataSource(BenchArgs.poolConfig("scale-admin", mainUrl, 1));
                     Connection c = admin.getConnection(); Statement s = c.createStatement()) {
                    for (String name : created) {
                        s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
                    }
                }
            }
        }
    }

    /** The URL of database {@code d}: on PostgreSQL created beside the first (and dropped after). */
    private String siblingUrl(String mainUrl, int d, HikariDataSource main, List<String> created) throws Exception {
        if (engine.equals("h2")) {
            return "jdbc:h2:mem:scale_" + d + ";DB_CLOSE_DELAY=-1";
        }
        String name = (schema + "_" + d).toLowerCase(Locale.ROOT);
        try (Connection c = main.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        created.add(name);
        return mainUrl.replaceFirst("/[^/?;]+(\\?|$)", "/" + name + "$1");
    }

    private DocumentStore store(List<HikariDataSource> pools, DaemonMode mode) {
        StoreOptions options = new StoreOptions().dataSource(pools.get(0)).schema(schema)
                .applyAllDatabaseChangesOnStartup(true);
        options.events().register(Tick.class).partitionByTenant(true);
        for (int d = 1; d < databases; d++) {
            List<String> mapped = new ArrayList<>();
            for (int t = 0; t < tenants; t++) {
                if (t % databases == d) {
                    mapped.add(tenant(t));
                }
            }
            options.tenancy().database("db" + d, pools.get(d), mapped.toArray(String[]::new));
        }
        for (int p = 0; p < projections; p++) {
            options.projections().add(KINDS.get(p).projection(String.format(Locale.ROOT, "P%02d", p + 1)),
                    Lifecycle.ASYNC);
        }
        options.daemon().mode(mode).pollingInterval(polling).workerThreads(workers)
                .sharedLoadMegabytes(sharedLoadMegabytes).sharedTransactions(sharedTransactions)
                .asyncPageCommits(asyncCommits);
        return Ferret.createStore(options);
    }

    private void appendToEveryTenant(DocumentStore store, int events) {
        for (int t = 0; t < tenants; t++) {
            try (DocumentSession session = store.openSession(tenant(t))) {
                for (int e = 0; e < events; e++) {
                    session.events().append("s", new Tick(e));
                }
                session.saveChanges();
            }
        }
    }

    private void measure(List<HikariDataSource> pools) throws Exception {
        int shards = tenants * projections;
        long started = System.nanoTime();
        try (DocumentStore writer = store(pools, DaemonMode.DISABLED)) {
            log(String.format(Locale.ROOT, "schema on %d databases in %.1f s", databases, seconds(started)));
            started = System.nanoTime();
            appendToEveryTenant(writer, 1);
            log(String.format(Locale.ROOT, "one event in each of %d tenants in %.1f s", tenants, seconds(started)));
        }

        started = System.nanoTime();
        DocumentStore store = store(pools, DaemonMode.SOLO);
        store.waitForNonStaleProjectionData(Duration.ofMinutes(30));
        double warm = seconds(started);
        StatusSummary afterStart = store.daemon().summary();
        results.put("Shards (tenants x projections)", String.format(Locale.ROOT, "%,d", shards));
        results.put("First start: store opened → every shard applied its tenant's first event",
                String.format(Locale.ROOT, "%.1f s (%,.0f shards/s); %,d shards, %s", warm, afterStart.shards() / warm,
                        afterStart.shards(), afterStart.byState()));

        // what reading the status costs at this size
        results.put("status(): every shard", timings(() -> store.daemon().status().shards().size()));
        results.put("summary(): counts by state, projection, database", timings(() -> store.daemon().summary()
                .shards()));
        results.put("shards(query): a page of 100 of one database", timings(() -> store.daemon()
                .shards(ShardQuery.all().database("db1")).shards().size()));
        results.put("shards(query): the paused ones (none)", timings(() -> store.daemon()
                .shards(ShardQuery.all().states(ShardState.PAUSED)).matched()));
        String probe = "P01:All@" + tenant(tenants / 2);
        results.put("shard(name)", timings(() -> store.daemon().shard(probe).isPresent() ? 1 : 0));

        // idle cost: what the node burns with nothing to do
        long cpuBefore = processCpuNanos();
        long idleStart = System.nanoTime();
        Thread.sleep(idleSeconds * 1000L);
        double idleCores = (processCpuNanos() - cpuBefore) / (double) (System.nanoTime() - idleStart);
        results.put("Idle, " + idleSeconds + " s: CPU of this process", String.format(Locale.ROOT, "%.1f%% of one core",
                idleCores * 100));

        // the burst
        started = System.nanoTime();
        appendToEveryTenant(store, burst);
        double appended = seconds(started);
        store.waitForNonStaleProjectionData(Duration.ofMinutes(30));
        double caughtUp = seconds(started);
        int events = tenants * burst;
        results.put("Burst: " + burst + " events in each tenant (" + String.format(Locale.ROOT, "%,d", events)
                + " events), appended in", String.format(Locale.ROOT, "%.1f s", appended));
        results.put("Burst: first append → every shard has applied it",
                String.format(Locale.ROOT, "%.1f s (%,.0f event applications/s over %,d shards)", caughtUp,
                        (double) events * projections / caughtUp, shards));
        checkSample(store);

        started = System.nanoTime();
        store.close();
        results.put("close()", String.format(Locale.ROOT, "%.0f ms", seconds(started) * 1000));

        // a warm start: every shard caught up, the node restarted
        started = System.nanoTime();
        try (DocumentStore again = store(pools, DaemonMode.SOLO)) {
            again.waitForNonStaleProjectionData(Duration.ofMinutes(30));
            double restarted = seconds(started);
            StatusSummary summary = again.daemon().summary();
            results.put("Warm start: store reopened, every shard caught up → non-stale",
                    String.format(Locale.ROOT, "%.1f s; %,d shards, %s", restarted, summary.shards(),
                            summary.byState()));
        }
        System.gc();
        results.put("Heap used after the store closed and a GC", String.format(Locale.ROOT, "%,d MiB",
                (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) >> 20));
    }

    /** Every projection's document of {@code sample} tenants spread over all: the first event and the burst. */
    private void checkSample(DocumentStore store) {
        int checked = 0;
        int step = Math.max(1, tenants / sample);
        for (int t = 0; t < tenants; t += step) {
            try (QuerySession session = store.querySession(tenant(t))) {
                for (int p = 0; p < projections; p++) {
                    Counted doc = session.load(KINDS.get(p).type(), "s").orElseThrow(() -> new IllegalStateException(
                            "a document is missing"));
                    if (doc.n() != 1 + burst) {
                        throw new IllegalStateException("tenant " + t + ", projection " + (p + 1) + " counted "
                                + doc.n() + " events, expected " + (1 + burst));
                    }
                    checked++;
                }
            }
        }
        results.put("Checked after the burst", String.format(Locale.ROOT, "%,d documents of %d tenants, all exact",
                checked, (checked / projections)));
        log("checked " + checked + " documents");
    }

    private String timings(Callable<Integer> call) throws Exception {
        call.call();
        long[] nanos = new long[statusCalls];
        for (int i = 0; i < statusCalls; i++) {
            long t = System.nanoTime();
            call.call();
            nanos[i] = System.nanoTime() - t;
        }
        Arrays.sort(nanos);
        return String.format(Locale.ROOT, "p50 %.2f ms, max %.2f ms (%d calls)", nanos[statusCalls / 2] / 1e6,
                nanos[statusCalls - 1] / 1e6, statusCalls);
    }

    private static long processCpuNanos() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }

    private void print(String description) {
        System.out.println();
        System.out.println("| Ferret at scale | " + engine + " |");
        System.out.println("|---|---|");
        System.out.println("| Engine | " + description + " |");
        System.out.println("| Machine | " + Runtime.getRuntime().availableProcessors() + " cores, max heap "
                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB, Java " + System.getProperty("java.version") + " |");
        System.out.println("| Shape | " + tenants + " tenants, " + databases + " databases, " + projections
                + " projections, SOLO, " + workers + " workers, polling " + polling.toMillis() + " ms, " + pool
                + " connections per database, shared loads " + (sharedLoadMegabytes == 0 ? "off" : sharedLoadMegabytes
                + " MiB") + ", shared transactions " + (sharedTransactions ? "on" : "off")
                + ", async page commits " + (asyncCommits ? "on" : "off") + " |");
        results.forEach((k, v) -> System.out.println("| " + k + " | " + v + " |"));
        System.out.println();
    }
}
