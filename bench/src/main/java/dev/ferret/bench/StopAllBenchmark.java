package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How long {@code DocumentStore.close()} takes to stop a daemon running 1,000 shards, against the promise that it
 * returns within one {@code stopAndDrainTimeout} in total, however many shards drain and even when some pages ignore
 * interrupts.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pstopall verify [-Dstopall.args="engine=postgres"]}.
 *
 * <p>The workload: tenant-partitioned events, one async projection ({@link Ledger}) and {@code tenants} tenants, so
 * one shard {@code Ledger:All@<tenant>} per tenant. Every tenant holds {@code events} events over {@code streams}
 * streams, so every shard is behind when the daemon starts. Each round gets a fresh schema, appends, and opens a
 * SOLO store with {@code workers} worker threads; two scenarios:
 * <ul>
 *   <li><b>busy</b>: the first {@code stubborn} tenants' pages block in {@code apply} on a latch, swallowing every
 *       interrupt (work that cannot be cancelled; each holds a worker and its page's connection), while the other
 *       workers work through the remaining shards' pages. Once every stubborn page is blocked and {@code settleMs}
 *       more have passed, {@code close()} is timed. The latch is opened only after it returned, so the stubborn
 *       pages must be cancelled (connection aborted) and their threads left behind;</li>
 *   <li><b>idle</b>: the same shards after a full catch-up, nothing blocking: a new store waits until it is
 *       non-stale, then {@code close()} is timed.</li>
 * </ul>
 * After a busy close the harness opens the gate, waits for the abandoned pages to end plus 2 s, and reads the
 * stubborn shards' persisted progression: a cancelled page is meant to roll back, so any of them above zero is a page
 * that committed after close() returned, and is reported (with how many of its events the closed store applied
 * twice, which tells a retried page from one whose aborted transaction committed anyway).
 * Each scenario runs {@code rounds} times; the table reports min / median / max. While {@code close()} runs, a
 * sampler records the closing thread's stack every 10 ms, so the output says where the time went; if a close
 * overruns the bound by more than {@code marginMs} it also prints a dump of every thread, taken while it hangs.
 *
 * <p>Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code tenants}
 * (1000), {@code events} per tenant (200), {@code streams} per tenant (4), {@code batch} (25), {@code workers} (8),
 * {@code stubborn} tenants (4), {@code drainMs} ({@code stopAndDrainTimeout}, 2000), {@code settleMs} (500),
 * {@code workMicros} (CPU per event of the busy shards, 200), {@code rounds} (5), {@code marginMs} (500),
 * {@code mode} (SOLO | HOT_COLD).
 */
public final class StopAllBenchmark {

    static final String PROJECTION = "Ledger";

    /** A stream's running count. Public, for JSON-B. */
    public record Entry(String id, int last) {
    }

    /**
     * Upserts one document per event; for the stubborn tenants it first blocks on the gate, ignoring interrupts,
     * until the gate opens or {@code holdMillis} pass.
     */
    static final class Ledger extends EventProjection {
        private final Set<String> stubbornTenants;
        private final long holdMillis;
        private final long workNanos;
        volatile CountDownLatch gate = new CountDownLatch(1);
        /** Stubborn pages blocked right now, by thread: the ones close() must leave behind. */
        final Set<Thread> blocked = ConcurrentHashMap.newKeySet();
        /** Stubborn tenants' events applied, by sequence: a second apply means the page ran again. */
        final Map<Long, Integer> stubbornApplies = new ConcurrentHashMap<>();

        Ledger(Set<String> stubbornTenants, long holdMillis, long workMicros) {
            super(PROJECTION, Entry.class);
            this.stubbornTenants = stubbornTenants;
            this.holdMillis = holdMillis;
            this.workNanos = TimeUnit.MICROSECONDS.toNanos(workMicros);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (stubbornTenants.contains(event.tenantId())) {
                stubbornApplies.merge(event.sequence(), 1, Integer::sum);
            }
            CountDownLatch current = gate;
            if (current.getCount() > 0 && stubbornTenants.contains(event.tenantId())) {
                blocked.add(Thread.currentThread());
                try {
                    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdMillis);
                    while (current.getCount() > 0 && System.nanoTime() < deadline) {
                        try {
                            current.await(50, TimeUnit.MILLISECONDS);
                        } catch (InterruptedException ignored) {
                            // deliberately swallowed: this page cannot be cancelled, only abandoned
                        }
                    }
                } finally {
                    blocked.remove(Thread.currentThread());
                }
            }
            operations.store(new Entry(event.streamId(), spin(event.dataAs(Tick.class).n())));
        }

        /**
         * Burns {@code workNanos} of CPU (a projection that computes something): without it 1,000 shards of this
         * size catch up in a few seconds on H2, and close() would find most of them idle.
         */
        private int spin(int n) {
            long until = System.nanoTime() + workNanos;
            int x = n;
            while (System.nanoTime() < until) {
                x = x * 31 + 7;
            }
            return x == Integer.MIN_VALUE ? n + 1 : n;
        }
    }

    /** One timed close, with what the daemon was doing just before it. */
    record Close(double millis, int shards, int behind, int stubbornBlocked, int leftBehind) {
    }

    /** The busy scenario's close, and the stubborn shards whose progression moved after it returned. */
    record BusyRound(Close close, Map<String, Long> movedAfterClose, long reapplied) {
    }

    private final String engine;
    private final String url;
    private final int tenants;
    private final int events;
    private final int streams;
    private final int batch;
    private final int workers;
    private final int stubborn;
    private final Duration drain;
    private final long settleMs;
    private final long workMicros;
    private final int rounds;
    private final long marginMs;
    private final DaemonMode mode;
    /** Closing-thread samples of every round, by the frame they were in; see {@link #where}. */
    private final Map<String, Map<String, Integer>> samples = new LinkedHashMap<>();
    /** Rounds, by how many abandoned stubborn pages committed after close() had returned; expected none. */
    private final Map<Integer, Integer> committedAfterClose = new TreeMap<>();

    private StopAllBenchmark(Map<String, String> args) {
        this.engine = args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT);
        this.url = BenchArgs.url(args, engine, "stopall");
        this.tenants = Integer.parseInt(args.getOrDefault("tenants", "1000"));
        this.events = Integer.parseInt(args.getOrDefault("events", "200"));
        this.streams = Integer.parseInt(args.getOrDefault("streams", "4"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "25"));
        this.workers = Integer.parseInt(args.getOrDefault("workers", "8"));
        this.stubborn = Integer.parseInt(args.getOrDefault("stubborn", "4"));
        this.drain = Duration.ofMillis(Long.parseLong(args.getOrDefault("drainMs", "2000")));
        this.settleMs = Long.parseLong(args.getOrDefault("settleMs", "500"));
        this.workMicros = Long.parseLong(args.getOrDefault("workMicros", "200"));
        this.rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
        this.marginMs = Long.parseLong(args.getOrDefault("marginMs", "500"));
        this.mode = DaemonMode.valueOf(args.getOrDefault("mode", "SOLO").toUpperCase(Locale.ROOT));
        if (stubborn >= workers) {
            throw new IllegalArgumentException("stubborn (" + stubborn + ") must be below workers (" + workers
                    + "): otherwise no worker is left busy");
        }
    }

    public static void main(String[] argv) throws Exception {
        new StopAllBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[stopall %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    static String tenant(int t) {
        return String.format(Locale.ROOT, "t%04d", t);
    }

    private void run() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setPoolName("stopall-bench");
        config.setJdbcUrl(url);
        // each worker holds one connection while its page loads or writes; plus the detector and this harness
        config.setMaximumPoolSize(workers + 4);
        List<Close> busy = new ArrayList<>();
        List<Close> idle = new ArrayList<>();
        String database;
        try (HikariDataSource ds = new HikariDataSource(config)) {
            try (Connection c = ds.getConnection()) {
                DatabaseMetaData md = c.getMetaData();
                database = md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
            }
            log(String.format(Locale.ROOT, "%s; %,d tenants x %d events, batch %d, %d workers, %d stubborn tenants,"
                    + " stopAndDrainTimeout %d ms, %s", database, tenants, events, batch, workers, stubborn,
                    drain.toMillis(), mode));
            for (int round = 1; round <= rounds; round++) {
                String schema = "stopall_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
                try {
                    append(ds, schema);
                    BusyRound busyRound = busyClose(ds, schema);
                    Close b = busyRound.close();
                    busy.add(b);
                    log(String.format(Locale.ROOT, "round %d busy: close() %.0f ms; %d shards, %d behind, %d stubborn"
                                    + " pages blocked, %d still blocked after it returned", round, b.millis(),
                            b.shards(), b.behind(), b.stubbornBlocked(), b.leftBehind()));
                    if (!busyRound.movedAfterClose().isEmpty()) {
                        committedAfterClose.merge(busyRound.movedAfterClose().size(), 1, Integer::sum);
                        log("round " + round + ": abandoned pages committed AFTER close() returned, progression now "
                                + busyRound.movedAfterClose() + "; " + busyRound.reapplied() + " of their events"
                                + " were applied twice by the closed store (the page ran again)");
                    }
                    Close i = idleClose(ds, schema);
                    idle.add(i);
                    log(String.format(Locale.ROOT, "round %d idle: close() %.0f ms; %d shards, %d behind", round,
                            i.millis(), i.shards(), i.behind()));
                } finally {
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        s.execute("DROP SCHEMA " + schema + " CASCADE");
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "%nStopping %,d shards on %s: %d workers, batch %d, stopAndDrainTimeout %d ms,"
                        + " %d cores, Java %s, max heap %,d MiB (%d rounds)%n%n", tenants, database, workers, batch,
                drain.toMillis(), Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20, rounds);
        System.out.println("| scenario | close() min / median / max | over the bound | shards behind at close |");
        System.out.println("|---|---|---|---|");
        row("busy, " + stubborn + " pages ignoring interrupts", busy);
        row("idle, caught up", idle);
        System.out.println();
        System.out.println(committedAfterClose.isEmpty()
                ? "No abandoned page committed after close() returned."
                : "Rounds in which abandoned pages committed after close() returned (pages=rounds): "
                        + committedAfterClose);
        samples.forEach((scenario, frames) -> {
            int total = frames.values().stream().mapToInt(Integer::intValue).sum();
            System.out.printf(Locale.ROOT, "Where close() spent its time (%s, %d samples of 10 ms):%n", scenario,
                    total);
            frames.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(6)
                    .forEach(e -> System.out.printf(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * e.getValue() / total,
                            e.getKey()));
        });
    }

    private void row(String scenario, List<Close> closes) {
        List<Double> millis = new ArrayList<>(closes.stream().map(Close::millis).toList());
        Collections.sort(millis);
        List<Integer> behind = new ArrayList<>(closes.stream().map(Close::behind).toList());
        Collections.sort(behind);
        double max = millis.get(millis.size() - 1);
        long over = closes.stream().filter(c -> c.millis() > drain.toMillis() + marginMs).count();
        System.out.printf(Locale.ROOT, "| %s | %,.0f / %,.0f / %,.0f ms | %s | %s |%n", scenario, millis.get(0),
                millis.get(millis.size() / 2), max, over == 0 ? "never by > " + marginMs + " ms"
                        : over + " of " + closes.size() + " by > " + marginMs + " ms",
                behind.get(0).equals(behind.get(behind.size() - 1)) ? behind.get(0).toString()
                        : String.format(Locale.ROOT, "%d-%d of %d", behind.get(0), behind.get(behind.size() - 1),
                        closes.get(0).shards()));
    }

    private DocumentStore store(HikariDataSource ds, String schema, DaemonMode daemonMode, Ledger ledger) {
        return Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class).partitionByTenant(true);
            o.projections().add(ledger, Lifecycle.ASYNC);
            o.daemon().mode(daemonMode).batchSize(batch).workerThreads(workers).stopAndDrainTimeout(drain)
                    .pollingInterval(Duration.ofMillis(100));
        });
    }

    /** Every tenant's events, appended with the daemon disabled. */
    private void append(HikariDataSource ds, String schema) throws Exception {
        long started = System.nanoTime();
        try (DocumentStore writer = store(ds, schema, DaemonMode.DISABLED, new Ledger(Set.of(), 0, 0))) {
            ExecutorService appenders = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < tenants; t++) {
                    String tenant = tenant(t);
                    done.add(appenders.submit(() -> {
                        try (DocumentSession session = writer.openSession(tenant)) {
                            for (int s = 0; s < streams; s++) {
                                List<Tick> ticks = new ArrayList<>();
                                for (int n = s; n < events; n += streams) {
                                    ticks.add(new Tick(n));
                                }
                                session.events().append("stream-" + s, ticks);
                            }
                            session.saveChanges();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(10, TimeUnit.MINUTES);
                }
            } finally {
                appenders.shutdownNow();
            }
        }
        log(String.format(Locale.ROOT, "appended %,d events for %,d tenants in %.1f s", (long) tenants * events,
                tenants, (System.nanoTime() - started) / 1e9));
    }

    private BusyRound busyClose(HikariDataSource ds, String schema) throws Exception {
        Set<String> stubbornTenants = new HashSet<>();
        for (int t = 0; t < stubborn; t++) {
            // spread over the tenants, so they are not simply the first shards the daemon starts
            stubbornTenants.add(tenant(t * (tenants / stubborn)));
        }
        // long enough to outlast any close; opened by hand once close() returned
        Ledger ledger = new Ledger(stubbornTenants, TimeUnit.MINUTES.toMillis(5), workMicros);
        DocumentStore store = store(ds, schema, mode, ledger);
        Close close;
        try {
            long waitUntil = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (ledger.blocked.size() < stubborn || store.daemon().status().shards().size() < tenants) {
                if (System.nanoTime() > waitUntil) {
                    throw new IllegalStateException("after 5 minutes, " + ledger.blocked.size() + " of " + stubborn
                            + " stubborn pages blocked and " + store.daemon().status().shards().size() + " of "
                            + tenants + " shards found");
                }
                Thread.sleep(20);
            }
            Thread.sleep(settleMs);
            close = timedClose("busy", store, () -> ledger.blocked.size());
        } finally {
            ledger.gate.countDown();
        }
        // the abandoned pages end on their own once the gate opens; the next round must not share their workers
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!ledger.blocked.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        // their pages were cancelled and rolled back: give a stray retry time to show, then read what they left
        Thread.sleep(2000);
        long reapplied = ledger.stubbornApplies.values().stream().filter(n -> n > 1).count();
        return new BusyRound(close, progressions(ds, schema, stubbornTenants), reapplied);
    }

    /** The persisted progression of the given tenants' shards that moved above zero. */
    private static Map<String, Long> progressions(HikariDataSource ds, String schema, Set<String> stubbornTenants)
            throws SQLException {
        Map<String, Long> moved = new TreeMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT name, last_seq_id FROM " + schema + ".pc_event_progression")) {
            while (rs.next()) {
                String name = rs.getString(1);
                String tenant = name.substring(name.indexOf('@') + 1);
                if (stubbornTenants.contains(tenant) && rs.getLong(2) > 0) {
                    moved.put(name, rs.getLong(2));
                }
            }
        }
        return moved;
    }

    private Close idleClose(HikariDataSource ds, String schema) throws Exception {
        Ledger ledger = new Ledger(Set.of(), 0, 0);
        try (DocumentStore catchUp = store(ds, schema, DaemonMode.SOLO, ledger)) {
            catchUp.waitForNonStaleProjectionData(Duration.ofMinutes(10));
        }
        DocumentStore store = store(ds, schema, mode, ledger);
        store.waitForNonStaleProjectionData(Duration.ofMinutes(10));
        long waitUntil = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (store.daemon().status().shards().size() < tenants && System.nanoTime() < waitUntil) {
            Thread.sleep(20);
        }
        Thread.sleep(settleMs);
        return timedClose("idle", store, () -> 0);
    }

    /** Times store.close() on its own thread, sampling that thread's stack, and dumps all threads if it overruns. */
    private Close timedClose(String scenario, DocumentStore store, Supplier<Integer> blocked) throws Exception {
        DaemonStatus before = store.daemon().status();
        int behind = (int) before.shards().stream().filter(s -> s.lag() > 0).count();
        int stubbornBlocked = blocked.get();
        Map<String, Integer> frames = samples.computeIfAbsent(scenario, k -> new HashMap<>());
        CountDownLatch closed = new CountDownLatch(1);
        long[] took = new long[1];
        Thread closer = new Thread(() -> {
            long started = System.nanoTime();
            try {
                store.close();
            } finally {
                took[0] = System.nanoTime() - started;
                closed.countDown();
            }
        }, "stopall-closer");
        long overrun = drain.toNanos() + TimeUnit.MILLISECONDS.toNanos(marginMs);
        long started = System.nanoTime();
        closer.start();
        boolean dumped = false;
        while (!closed.await(10, TimeUnit.MILLISECONDS)) {
            frames.merge(where(closer.getStackTrace()), 1, Integer::sum);
            if (!dumped && System.nanoTime() - started > overrun) {
                dumped = true;
                log("close() has run past the bound by more than " + marginMs + " ms; all threads:");
                for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                    System.out.print(info);
                }
            }
        }
        closer.join();
        int leftBehind = blocked.get();
        return new Close(took[0] / 1e6, before.shards().size(), behind, stubbornBlocked, leftBehind);
    }

    /** The innermost Ferret frame, and the frame the thread was actually in when it is not Ferret's own. */
    private static String where(StackTraceElement[] stack) {
        if (stack.length == 0) {
            return "(ended)";
        }
        StackTraceElement top = stack[0];
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().startsWith("dev.ferret.runtime")) {
                String ferret = simple(frame) + ":" + frame.getLineNumber();
                return frame == top ? ferret : simple(top) + " in " + ferret;
            }
        }
        return simple(top);
    }

    private static String simple(StackTraceElement frame) {
        String name = frame.getClassName();
        return name.substring(name.lastIndexOf('.') + 1) + "." + frame.getMethodName();
    }
}
