package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.JsonbSerializer;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.engines.Dialects;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Measures, in one run on one database and schema:
 * <ol type="a">
 *   <li>catch-up throughput of an async {@link Tally} snapshot over {@code events} events in {@code streams}
 *       streams, appended beforehand with the daemon disabled: a second store starts in SOLO mode and is timed from
 *       its creation until {@code waitForNonStaleProjectionData} returns;</li>
 *   <li>the ceiling: the same final documents by plain JDBC (read the event table, fold per stream in memory,
 *       batch-upsert into a scratch table of the document table's shape with the dialect's own upsert);</li>
 *   <li>the ratio a/b;</li>
 *   <li>append-to-visible latency under a steady trickle of appends, seen by polling {@code session.load} and by an
 *       {@link AsyncListener#afterCommit}.</li>
 * </ol>
 * and prints a Markdown table.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pbench verify -Dbench.args="engine=postgres"}.
 * Arguments are space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code events}
 * (100000), {@code streams} (1000), {@code perSave} (events per saveChanges, 100), {@code layout} (interleaved: event
 * i goes to stream i mod streams, so a daemon page touches many documents | grouped: each stream's events are
 * consecutive), {@code polling} (daemon polling interval ms, 100), {@code batch} (daemon batch size, 500),
 * {@code growth} (daemon maxBatchGrowth, 10; 1 keeps every page at {@code batch}), {@code rebuildGrowth} (daemon
 * rebuildBatchGrowth, 100), {@code asyncCommits} (daemon asyncPageCommits, true),
 * {@code rate} (trickle appends/s, 20), {@code seconds} (trickle duration, 15), {@code pollMs} (visibility poll
 * interval, 2), {@code ceilingRuns} (5), {@code rebuildRuns} (3: rebuilds timed after the catch-up, the JIT warm),
 * {@code keep} (true keeps the schema).
 */
public final class CatchUpBenchmark {

    private static final String TENANT = StoreOptions.DEFAULT_TENANT;

    private final Map<String, String> args;
    private final String engineName;
    private final String url;
    private final int events;
    private final int streams;
    private final int perSave;
    private final boolean interleaved;
    private final Duration polling;
    private final int batch;
    private final int growth;
    private final int rebuildGrowth;
    private final boolean asyncCommits;
    private final int cache;
    private final int rate;
    private final int seconds;
    private final int pollMs;
    private final int ceilingRuns;
    private final int rebuildRuns;
    private final String schema = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final Map<String, String> results = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();

    private CatchUpBenchmark(Map<String, String> args) {
        this.args = args;
        this.engineName = arg("engine", "h2").toLowerCase(Locale.ROOT);
        this.url = BenchArgs.url(args, engineName, "bench");
        this.events = Integer.parseInt(arg("events", "100000"));
        this.streams = Integer.parseInt(arg("streams", "1000"));
        this.perSave = Integer.parseInt(arg("perSave", "100"));
        this.interleaved = switch (arg("layout", "interleaved")) {
            case "interleaved" -> true;
            case "grouped" -> false;
            default -> throw new IllegalArgumentException("layout must be interleaved or grouped");
        };
        this.polling = Duration.ofMillis(Long.parseLong(arg("polling", "100")));
        this.batch = Integer.parseInt(arg("batch", "500"));
        this.growth = Integer.parseInt(arg("growth", "10"));
        this.rebuildGrowth = Integer.parseInt(arg("rebuildGrowth", "100"));
        this.asyncCommits = Boolean.parseBoolean(arg("asyncCommits", "true"));
        this.cache = Integer.parseInt(arg("cache", "1000"));
        this.rate = Integer.parseInt(arg("rate", "20"));
        this.seconds = Integer.parseInt(arg("seconds", "15"));
        this.pollMs = Integer.parseInt(arg("pollMs", "2"));
        this.ceilingRuns = Integer.parseInt(arg("ceilingRuns", "5"));
        this.rebuildRuns = Integer.parseInt(arg("rebuildRuns", "3"));
        if (events % streams != 0) {
            throw new IllegalArgumentException("events must be a multiple of streams");
        }
    }

    private String arg(String key, String fallback) {
        return args.getOrDefault(key, fallback);
    }

    public static void main(String[] argv) throws Exception {
        new CatchUpBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[bench %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private void run() throws Exception {
        HikariConfig config = BenchArgs.poolConfig("bench", url, 10);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            String engineDescription = BenchArgs.engineDescription(ds);
            log("engine " + engineDescription + ", schema " + schema);
            try {
                measure(ds);
            } finally {
                if (!Boolean.parseBoolean(arg("keep", "false"))) {
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        s.execute("DROP SCHEMA " + schema + " CASCADE");
                        log("dropped schema " + schema);
                    }
                }
            }
            print(engineDescription);
        }
    }

    private DocumentStore store(HikariDataSource ds, DaemonMode mode, AsyncListener listener) {
        return store(ds, mode, listener, true);
    }

    private DocumentStore store(HikariDataSource ds, DaemonMode mode, AsyncListener listener, boolean commitSignals) {
        Consumer<StoreOptions> configure = o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class);
            o.projections().snapshot(Tally.class, Lifecycle.ASYNC, s -> s
                    .create(Tick.class, Tally::create)
                    .apply(Tick.class, Tally::apply));
            if (listener != null) {
                o.projections().asyncListeners().add(listener);
            }
            o.daemon().mode(mode).pollingInterval(polling).batchSize(batch).maxBatchGrowth(growth).rebuildBatchGrowth(rebuildGrowth)
                    .asyncPageCommits(asyncCommits)
                    .documentCacheSize(cache).commitSignals(commitSignals);
        };
        return Ferret.createStore(configure);
    }

    private String streamOf(int event) {
        return "stream-" + (interleaved ? event % streams : event / (events / streams));
    }

    private void measure(HikariDataSource ds) throws Exception {
        DatabaseEngine engine;
        // setup: the events, with the daemon disabled
        try (DocumentStore writer = store(ds, DaemonMode.DISABLED, null)) {
            engine = writer.engine();
            long started = System.nanoTime();
            for (int from = 0; from < events; from += perSave) {
                try (DocumentSession session = writer.openSession()) {
                    int to = Math.min(events, from + perSave);
                    int i = from;
                    while (i < to) {
                        String stream = streamOf(i);
                        List<Tick> ticks = new ArrayList<>();
                        while (i < to && streamOf(i).equals(stream)) {
                            ticks.add(new Tick(i++));
                        }
                        session.events().append(stream, ticks);
                    }
                    session.saveChanges();
                }
                if ((from / perSave) % 200 == 199) {
                    log("appended " + (from + perSave) + " events");
                }
            }
            double s = seconds(started);
            results.put("Setup: append " + events + " events (daemon disabled, " + perSave + " per saveChanges)",
                    String.format(Locale.ROOT, "%.1f s (%,.0f events/s)", s, events / s));
            log(String.format(Locale.ROOT, "appended %d events in %.1f s", events, s));
        }

        // (a) catch-up of a fresh SOLO store
        double catchUpSeconds;
        long started = System.nanoTime();
        double rebuildSeconds = Double.MAX_VALUE;
        List<String> rebuildTimes = new ArrayList<>();
        try (DocumentStore solo = store(ds, DaemonMode.SOLO, null)) {
            solo.waitForNonStaleProjectionData(Duration.ofMinutes(10));
            catchUpSeconds = seconds(started);
            log(String.format(Locale.ROOT, "catch-up: %d events in %.2f s", events, catchUpSeconds));
            // (a2) the same replay with the JIT warm: a rebuild deletes the snapshots and reads from the start
            for (int run = 0; run < rebuildRuns; run++) {
                long rebuildStarted = System.nanoTime();
                solo.daemon().rebuild("Tally", Duration.ofMinutes(30));
                double t = seconds(rebuildStarted);
                rebuildTimes.add(String.format(Locale.ROOT, "%.2f", t));
                rebuildSeconds = Math.min(rebuildSeconds, t);
                log(String.format(Locale.ROOT, "rebuild run %d: %d events in %.2f s", run + 1, events, t));
            }
        }

        // (b) the plain-JDBC ceiling
        Dialect dialect = Dialects.of(engine);
        TableNames names = new TableNames(schema, "pc_");
        double ceilingSeconds = Double.MAX_VALUE;
        List<String> ceilingTimes = new ArrayList<>();
        try (JsonbSerializer json = new JsonbSerializer()) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                for (String ddl : dialect.documentTable(names, "tally_ceiling").ddl()) {
                    s.execute(ddl);
                }
            }
            for (int run = 0; run < ceilingRuns; run++) {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.executeUpdate("DELETE FROM " + names.document("tally_ceiling"));
                }
                double t = ceiling(ds, engine, dialect.documentSql(names, "tally_ceiling"), names, json);
                ceilingTimes.add(String.format(Locale.ROOT, "%.2f", t));
                ceilingSeconds = Math.min(ceilingSeconds, t);
                log(String.format(Locale.ROOT, "ceiling run %d: %.2f s", run + 1, t));
            }
            verify(ds, engine, names, json);
        }
        results.put("(a) async catch-up (SOLO store start → waitForNonStaleProjectionData)",
                String.format(Locale.ROOT, "%,.0f events/s (%.2f s)", events / catchUpSeconds, catchUpSeconds));
        results.put("(b) ceiling: plain JDBC read + fold + batch upsert (best of " + ceilingRuns + ")",
                String.format(Locale.ROOT, "%,.0f events/s (%.2f s; runs: %s s)", events / ceilingSeconds,
                        ceilingSeconds, String.join(", ", ceilingTimes)));
        if (rebuildRuns > 0) {
            results.put("(a2) rebuild, JIT warm (daemon.rebuild → returns; best of " + rebuildRuns + ")",
                    String.format(Locale.ROOT, "%,.0f events/s (%.2f s; runs: %s s)", events / rebuildSeconds,
                            rebuildSeconds, String.join(", ", rebuildTimes)));
        }
        results.put("(c) ratio a/b", String.format(Locale.ROOT, "%.3f", ceilingSeconds / catchUpSeconds));
        if (rebuildRuns > 0) {
            results.put("(c2) ratio a2/b", String.format(Locale.ROOT, "%.3f", ceilingSeconds / rebuildSeconds));
        }

        // (d) append-to-visible latency under a trickle; on PostgreSQL also from a second node, with and without
        // the commit signal (two stores on one database, as two nodes would be)
        latency(ds, "(d)", false, true);
        if (engine == DatabaseEngine.POSTGRESQL) {
            latency(ds, "(e) other node, commit signals on:", true, true);
            latency(ds, "(f) other node, commit signals off:", true, false);
        }
    }

    /** One ceiling run; returns its seconds. */
    private double ceiling(HikariDataSource ds, DatabaseEngine engine, DocumentSql sql, TableNames names,
                           JsonbSerializer json) throws SQLException {
        String dataAsText = engine == DatabaseEngine.H2 ? "CAST(data AS VARCHAR)" : "data";
        long started = System.nanoTime();
        Map<String, Tally> folded = new LinkedHashMap<>();
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("SELECT stream_id, type, " + dataAsText + " FROM "
                        + names.events() + " WHERE tenant_id = ? ORDER BY seq_id")) {
                    ps.setFetchSize(1000);
                    ps.setString(1, TENANT);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            if (!"Tick".equals(rs.getString(2))) {
                                continue;
                            }
                            String stream = rs.getString(1);
                            Tick tick = json.fromJson(rs.getString(3), Tick.class);
                            Tally current = folded.get(stream);
                            folded.put(stream, current == null ? Tally.create(stream, tick) : Tally.apply(current, tick));
                        }
                    }
                }
                OffsetDateTime now = OffsetDateTime.now();
                try (PreparedStatement ps = c.prepareStatement(sql.upsert())) {
                    int pending = 0;
                    for (Tally tally : folded.values()) {
                        ps.setString(1, tally.id());
                        ps.setString(2, TENANT);
                        ps.setString(3, json.toJson(tally));
                        ps.setObject(4, now);
                        ps.addBatch();
                        if (++pending == batch) {
                            ps.executeBatch();
                            pending = 0;
                        }
                    }
                    if (pending > 0) {
                        ps.executeBatch();
                    }
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
        return seconds(started);
    }

    /** The projection and the ceiling hold the same documents, and they add up to every event. */
    private void verify(HikariDataSource ds, DatabaseEngine engine, TableNames names, JsonbSerializer json)
            throws SQLException {
        Map<String, Tally> projected = readDocs(ds, engine, names.document("tally"), json);
        Map<String, Tally> ceiling = readDocs(ds, engine, names.document("tally_ceiling"), json);
        long total = projected.values().stream().mapToLong(Tally::count).sum();
        if (!projected.equals(ceiling) || projected.size() != streams || total != events) {
            throw new IllegalStateException("projection and ceiling disagree: " + projected.size() + " vs "
                    + ceiling.size() + " documents, " + total + " events counted, expected " + streams + " / "
                    + events);
        }
        log("verified: " + streams + " documents, identical in projection and ceiling, counting " + total
                + " events");
    }

    private static Map<String, Tally> readDocs(HikariDataSource ds, DatabaseEngine engine, String table,
                                               JsonbSerializer json) throws SQLException {
        String dataAsText = engine == DatabaseEngine.H2 ? "CAST(data AS VARCHAR)" : "data";
        Map<String, Tally> docs = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, " + dataAsText + " FROM " + table)) {
            while (rs.next()) {
                Tally tally = json.fromJson(rs.getString(2), Tally.class);
                if (!tally.id().equals(rs.getString(1))) {
                    throw new IllegalStateException("document " + rs.getString(1) + " holds id " + tally.id());
                }
                docs.put(tally.id(), tally);
            }
        }
        return docs;
    }

    /** An append awaiting visibility: when saveChanges returned, and when the doc was seen each way (0: not yet). */
    private static final class Probe {
        volatile long saved;
        volatile long committedSeen;
        volatile long loadSeen;
        volatile long saveNanos;
    }

    /**
     * Append-to-visible under a trickle: appended through the daemon's own store, or with {@code acrossNodes} through
     * a second store on the same database whose daemon is off (another node, as far as the first can tell).
     */
    private void latency(HikariDataSource ds, String label, boolean acrossNodes, boolean commitSignals)
            throws Exception {
        Map<String, Probe> probes = new ConcurrentHashMap<>();
        AsyncListener listener = new AsyncListener() {
            @Override
            public void afterCommit(QuerySession session, ChangeSet changes) {
                long now = System.nanoTime();
                for (List<Object> docs : List.of(changes.inserted(), changes.updated())) {
                    for (Object doc : docs) {
                        if (doc instanceof Tally tally) {
                            Probe probe = probes.computeIfAbsent(tally.id() + "#" + tally.count(), k -> new Probe());
                            if (probe.committedSeen == 0) {
                                probe.committedSeen = now;
                            }
                        }
                    }
                }
            }
        };
        int appends = rate * seconds;
        long periodMicros = 1_000_000L / rate;
        long[] counts = new long[streams];
        Arrays.fill(counts, events / streams);
        AtomicInteger issued = new AtomicInteger();
        AtomicInteger timedOut = new AtomicInteger();
        List<Probe> all = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pollers = Executors.newFixedThreadPool(8);
        ScheduledExecutorService appender = Executors.newSingleThreadScheduledExecutor();
        try (DocumentStore store = store(ds, DaemonMode.SOLO, listener, commitSignals);
             DocumentStore writer = acrossNodes ? store(ds, DaemonMode.DISABLED, null, commitSignals) : null) {
            store.waitForNonStaleProjectionData(Duration.ofMinutes(1));
            // where the streams stand now: an earlier trickle of this run appended to them too
            try (QuerySession session = store.querySession()) {
                for (int i = 0; i < streams; i++) {
                    counts[i] = session.load(Tally.class, "stream-" + i).map(Tally::count).orElse(0L);
                }
            }
            DocumentStore appending = writer != null ? writer : store;
            log(label + " trickle: " + appends + " appends at " + rate + "/s");
            CountDownLatch done = new CountDownLatch(appends);
            ScheduledFuture<?> ticker = appender.scheduleAtFixedRate(() -> {
                int k = issued.getAndIncrement();
                if (k >= appends) {
                    return;
                }
                int index = k % streams;
                String stream = "stream-" + index;
                long expected = ++counts[index];
                Probe probe = probes.computeIfAbsent(stream + "#" + expected, key -> new Probe());
                try {
                    long before = System.nanoTime();
                    try (DocumentSession session = appending.openSession()) {
                        session.events().append(stream, new Tick(-k));
                        session.saveChanges();
                    }
                    probe.saved = System.nanoTime();
                    probe.saveNanos = probe.saved - before;
                    all.add(probe);
                } catch (RuntimeException e) {
                    log("append failed: " + e);
                    done.countDown();
                    return;
                }
                pollers.submit(() -> {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    try (QuerySession session = store.querySession()) {
                        while (System.nanoTime() < deadline) {
                            Optional<Tally> tally = session.load(Tally.class, stream);
                            if (tally.isPresent() && tally.get().count() >= expected) {
                                probe.loadSeen = System.nanoTime();
                                return;
                            }
                            Thread.sleep(pollMs);
                        }
                        timedOut.incrementAndGet();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (RuntimeException e) {
                        log("poll failed: " + e);
                    } finally {
                        done.countDown();
                    }
                });
            }, 0, periodMicros, TimeUnit.MICROSECONDS);
            if (!done.await(seconds + 60L, TimeUnit.SECONDS)) {
                log("trickle did not finish in time");
            }
            ticker.cancel(false);
        } finally {
            appender.shutdownNow();
            pollers.shutdownNow();
        }
        List<Long> visible = new ArrayList<>();
        List<Long> committed = new ArrayList<>();
        List<Long> saves = new ArrayList<>();
        synchronized (all) {
            for (Probe p : all) {
                saves.add(p.saveNanos);
                if (p.loadSeen != 0) {
                    visible.add(p.loadSeen - p.saved);
                }
                if (p.committedSeen != 0) {
                    // the listener may fire before saveChanges has returned to the appender
                    committed.add(Math.max(0, p.committedSeen - p.saved));
                }
            }
        }
        results.put(label + " trickle", appends + " appends at " + rate + "/s for " + seconds + " s, 1 event each"
                + (timedOut.get() > 0 ? ", " + timedOut.get() + " not visible within 30 s" : ""));
        results.put(label + " append-to-visible p50 / p99 (saveChanges returned → load() sees it, polled every "
                + pollMs + " ms)", percentiles(visible));
        results.put(label + " saveChanges returned → afterCommit of the daemon batch p50 / p99",
                percentiles(committed));
        results.put(label + " saveChanges of one event p50 / p99", percentiles(saves));
    }

    private static String percentiles(List<Long> nanos) {
        if (nanos.isEmpty()) {
            return "n/a";
        }
        List<Long> sorted = new ArrayList<>(nanos);
        sorted.sort(null);
        return String.format(Locale.ROOT, "%.1f ms / %.1f ms (n=%d, max %.1f ms)", pct(sorted, 0.50) / 1e6,
                pct(sorted, 0.99) / 1e6, sorted.size(), sorted.get(sorted.size() - 1) / 1e6);
    }

    /** Nearest-rank percentile. */
    private static long pct(List<Long> sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }

    private void print(String engineDescription) {
        Runtime rt = Runtime.getRuntime();
        StringBuilder out = new StringBuilder();
        out.append('\n').append("| Ferret catch-up benchmark | ").append(engineName).append(" |\n");
        out.append("|---|---|\n");
        row(out, "Engine", engineDescription + " (" + StoreOptions.redact(url) + ", schema " + schema + ")");
        row(out, "Machine", rt.availableProcessors() + " cores, max heap " + (rt.maxMemory() >> 20) + " MiB, Java "
                + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
        row(out, "Workload", String.format(Locale.ROOT, "%,d events in %,d streams, %s layout; async snapshot"
                + " Tally; daemon SOLO, polling %d ms, batch %d, growth %d", events, streams,
                interleaved ? "interleaved" : "grouped", polling.toMillis(), batch, growth));
        results.forEach((k, v) -> row(out, k, v));
        notes.forEach(n -> row(out, "Note", n));
        System.out.println(out);
        System.out.flush();
    }

    private static void row(StringBuilder out, String key, String value) {
        out.append("| ").append(key.replace("|", "\\|")).append(" | ").append(value.replace("|", "\\|"))
                .append(" |\n");
    }
}
