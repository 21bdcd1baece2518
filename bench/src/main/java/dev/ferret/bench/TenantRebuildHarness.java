package dev.ferret.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.OperatingSystemMXBean;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.projections.CompositeProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.JsonbSerializer;
import dev.ferret.runtime.dialect.TableNames;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The tenant stress harness (a benchmark, not a timed test): rebuilds a two-stage composite projection for many
 * tenants at once, every stage-one page fanning out into thousands of upserts of large documents, under five daemon
 * configurations, and prints a Markdown table of peak heap used and rebuild time.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Ptenants verify [-Dtenants.args="key=value ..."]}.
 *
 * <p>The workload, with tenant-partitioned events (one shard per projection x tenant):
 * <ul>
 *   <li>{@code tenants} tenants each hold {@code pages} x {@code batch} {@link Fanout} events (padded to
 *       {@code eventBytes}), spread round-robin over {@code streams} streams per tenant;</li>
 *   <li>stage one, {@link Sheets} (an {@link EventProjection}), upserts {@code docsPerEvent} {@link Sheet} documents
 *       of {@code docKb} KB per event, ids rotating over {@code docsPerTenant} ids per tenant: with the defaults a
 *       500-event page writes 3,000 distinct 8 KB documents, and the table stays at 3,000 rows per tenant;</li>
 *   <li>stage two, {@link Summaries} (an {@link EventProjection}), folds one small {@link StreamSummary} per
 *       stream from the sheets stage one wrote in the same page; both are members of the composite
 *       {@value #COMPOSITE}, so a tenant has one shard and a page is loaded once for both stages.</li>
 * </ul>
 *
 * <p>How it measures: the parent JVM creates a dedicated schema, seeds the events and lets a SOLO daemon catch up
 * once (the "prepare" child, not measured). Then each configuration runs in a fresh child JVM (same classpath,
 * {@code -Xmx<xmx>} and the chosen GC), which opens a SOLO store with that configuration, waits until the daemon
 * has found every tenant's shard, runs {@code System.gc()}, resets the heap pools' peaks, starts a sampler thread
 * reading {@link MemoryMXBean#getHeapMemoryUsage()} every {@code sampleMs} ms, and then calls
 * {@code daemon().rebuild("Pipeline")}: every tenant's shard is torn down (both stages' tables) and replayed, and
 * the time runs until the call returned. It then
 * checks the documents (count, checksum of the event index each holds, tenant, body length) against what the events
 * must produce, so a fast but wrong run cannot look good. Between children the parent vacuums the document tables
 * and checkpoints, so every row starts from the same database state.
 *
 * <p>Rows ({@code rows}, comma separated): {@code unlimited} (no budget, no throttle), {@code budget<N>}
 * ({@code tenantLoadBudget = N x batch} events), {@code queue} (no budget, {@code maxConcurrentBatchWritesPerDatabase
 * = 1}: the fair write semaphore alone, loaded pages waiting in line holding their events), {@code writes<N>},
 * {@code mb<N>} ({@code tenantLoadBudgetMegabytes = N}: pages in flight bounded by what their events weigh once
 * applied, documents built and serialized included).
 *
 * <p>Arguments, space-separated {@code key=value}: {@code engine} (postgres | h2; h2 is in-memory in each child,
 * so its data counts in the measured heap), {@code url}, {@code tenants} (24), {@code pages} per tenant (5),
 * {@code batch} (500), {@code docsPerEvent} (6), {@code docsPerTenant} (3000), {@code docKb} (8), {@code streams}
 * per tenant (20), {@code eventBytes} (256), {@code workers} (48), {@code xmx} (3g), {@code gc} (G1 | Parallel |
 * Serial | Z | Shenandoah), {@code jvm} (extra child JVM flags, comma separated), {@code rows}
 * (unlimited,budget8,budget4,budget1,queue), {@code repeat} (1), {@code sampleMs} (10), {@code timeoutMin} per
 * rebuild (20), {@code keep} (false keeps the schema), {@code liveProbeMs} (0: off; else a probe thread runs
 * {@code System.gc()} this often and records the heap left in use, the live set; those full collections stop the
 * world, so a run with probes measures memory, not time).
 */
public final class TenantRebuildHarness {

    static final String STAGE_ONE = "Sheets";
    static final String STAGE_TWO = "Summaries";
    /** The composite of both stages: one shard per tenant, rebuilt by one call. */
    static final String COMPOSITE = "Pipeline";
    private static final String RESULT = "RESULT ";

    /** The event: its index within its tenant's log, and padding. Public, for JSON-B. */
    public record Fanout(int i, String pad) {
    }

    /** A stage-one document: which event wrote it last, for which tenant, and a large body. Public, for JSON-B. */
    public record Sheet(String id, String tenant, int i, long sequence, String body) {
    }

    /** A stage-two document: per stream, how many events and the sum of their indexes. Public, for JSON-B. */
    public record StreamSummary(String id, long count, long sum) {
    }

    /** Stage one: each event upserts {@code docsPerEvent} documents of {@code docBytes} characters. */
    static final class Sheets extends EventProjection {
        private final int docsPerEvent;
        private final int docsPerTenant;
        private final int docBytes;

        Sheets(int docsPerEvent, int docsPerTenant, int docBytes) {
            super(STAGE_ONE, Sheet.class);
            this.docsPerEvent = docsPerEvent;
            this.docsPerTenant = docsPerTenant;
            this.docBytes = docBytes;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            Fanout fanout = event.dataAs(Fanout.class);
            for (int k = 0; k < docsPerEvent; k++) {
                int id = (int) (((long) fanout.i() * docsPerEvent + k) % docsPerTenant);
                operations.store(new Sheet("s" + id, event.tenantId(), fanout.i(), event.sequence(),
                        body(event.tenantId(), fanout.i(), id, docBytes)));
            }
        }
    }

    /**
     * Stage two: per stream, counts the events and sums their indexes, after reading back the first {@link Sheet}
     * each event wrote in stage one: it must hold that event or a later one of the page, by sequence (a later event
     * may reuse the id). A stage that saw only committed sheets would read an earlier event (or none) and fail the page, so a
     * finished rebuild proves stage two read stage one's page.
     */
    static final class Summaries extends EventProjection {
        private final int docsPerEvent;
        private final int docsPerTenant;

        Summaries(int docsPerEvent, int docsPerTenant) {
            super(STAGE_TWO, StreamSummary.class);
            this.docsPerEvent = docsPerEvent;
            this.docsPerTenant = docsPerTenant;
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            Fanout fanout = event.dataAs(Fanout.class);
            String sheetId = "s" + (int) (((long) fanout.i() * docsPerEvent) % docsPerTenant);
            Sheet sheet = operations.load(Sheet.class, sheetId).orElseThrow(() -> new IllegalStateException(
                    "stage two found no sheet " + sheetId + " for event " + fanout.i()));
            // by sequence: a save appends its events stream by stream, so a later event may have a lower index
            if (sheet.sequence() < event.sequence()) {
                throw new IllegalStateException("stage two read sheet " + sheetId + " of sequence " + sheet.sequence()
                        + ", older than the event at " + event.sequence() + " that stage one wrote it for in this"
                        + " page");
            }
            StreamSummary summary = operations.load(StreamSummary.class, event.streamId())
                    .map(s -> new StreamSummary(s.id(), s.count() + 1, s.sum() + fanout.i()))
                    .orElseGet(() -> new StreamSummary(event.streamId(), 1, fanout.i()));
            operations.store(summary);
        }
    }

    /**
     * A body of {@code length} hex characters, its own instance per document: a 1 KB pseudo-random block (seeded by
     * tenant, event and id) repeated. PostgreSQL's TOAST compression shrinks it to about a kilobyte on disk; in the
     * JVM every document holds its full {@code length} characters.
     */
    static String body(String tenant, int event, int id, int length) {
        byte[] chars = new byte[length];
        int block = Math.min(length, 1024);
        SplittableRandom random = new SplittableRandom(((long) tenant.hashCode() << 40) ^ ((long) event << 20) ^ id);
        for (int j = 0; j < block; j++) {
            chars[j] = (byte) "0123456789abcdef".charAt(random.nextInt(16));
        }
        for (int filled = block; filled < length; filled += block) {
            System.arraycopy(chars, 0, chars, filled, Math.min(block, length - filled));
        }
        return new String(chars, StandardCharsets.ISO_8859_1);
    }

    private final Map<String, String> args;
    private final String engine;
    private final String url;
    private final int tenants;
    private final int pages;
    private final int batch;
    private final int docsPerEvent;
    private final int docsPerTenant;
    private final int docBytes;
    private final int streams;
    private final int eventBytes;
    private final int workers;
    private final String xmx;
    private final String gc;
    private final List<String> extraJvm;
    private final int sampleMs;
    private final int liveProbeMs;
    private final Duration timeout;

    private TenantRebuildHarness(Map<String, String> args) {
        this.args = args;
        this.engine = arg("engine", "postgres").toLowerCase(Locale.ROOT);
        this.url = BenchArgs.url(args, engine, "tenants");
        this.tenants = intArg("tenants", 24);
        this.pages = intArg("pages", 5);
        this.batch = intArg("batch", 500);
        this.docsPerEvent = intArg("docsPerEvent", 6);
        this.docsPerTenant = intArg("docsPerTenant", 3000);
        this.docBytes = (int) Math.round(Double.parseDouble(arg("docKb", "8")) * 1024);
        this.streams = intArg("streams", 20);
        this.eventBytes = intArg("eventBytes", 256);
        this.workers = intArg("workers", 48);
        this.xmx = arg("xmx", "3g");
        this.gc = arg("gc", "G1");
        this.extraJvm = arg("jvm", "").isBlank() ? List.of() : List.of(arg("jvm", "").split(","));
        this.sampleMs = intArg("sampleMs", 10);
        this.liveProbeMs = intArg("liveProbeMs", 0);
        this.timeout = Duration.ofMinutes(intArg("timeoutMin", 20));
    }

    private String arg(String key, String fallback) {
        return args.getOrDefault(key, fallback);
    }

    private int intArg(String key, int fallback) {
        return Integer.parseInt(arg(key, Integer.toString(fallback)));
    }

    public static void main(String[] argv) throws Exception {
        TenantRebuildHarness harness = new TenantRebuildHarness(BenchArgs.parse(argv));
        switch (harness.arg("mode", "parent")) {
            case "parent" -> harness.parent();
            case "prepare" -> {
                harness.prepareChild();
                System.exit(0);
            }
            case "measure" -> System.exit(harness.measureChild());
            default -> throw new IllegalArgumentException("mode must be parent, prepare or measure");
        }
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[tenants %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private boolean postgres() {
        return !engine.equals("h2");
    }

    // ------------------------------------------------------------------------------------------------------ parent

    /** One configuration of the daemon. */
    record Row(String key, long budgetPages, int writes, int megabytes) {
        static Row parse(String key) {
            if (key.equals("unlimited")) {
                return new Row(key, 0, 0, 0);
            }
            if (key.equals("queue")) {
                return new Row(key, 0, 1, 0);
            }
            if (key.startsWith("budget")) {
                return new Row(key, Long.parseLong(key.substring(6)), 0, 0);
            }
            if (key.startsWith("writes")) {
                return new Row(key, 0, Integer.parseInt(key.substring(6)), 0);
            }
            if (key.startsWith("mb")) {
                return new Row(key, 0, 0, Integer.parseInt(key.substring(2)));
            }
            throw new IllegalArgumentException("row must be unlimited, queue, budget<N>, writes<N> or mb<N>, was: "
                    + key);
        }

        String label(int batch) {
            if (megabytes > 0) {
                return "byte budget = " + megabytes + " MiB (tenantLoadBudgetMegabytes)";
            }
            if (budgetPages == 0 && writes == 0) {
                return "no limits";
            }
            if (budgetPages > 0) {
                return "budget = " + budgetPages + (budgetPages == 1 ? " page" : " pages") + " ("
                        + String.format(Locale.ROOT, "%,d", budgetPages * batch) + " events)"
                        + (writes > 0 ? ", writes " + writes : "");
            }
            return writes == 1 ? "FIFO queue alone (maxConcurrentBatchWrites = 1, no budget)"
                    : "maxConcurrentBatchWrites = " + writes + ", no budget";
        }
    }

    private void parent() throws Exception {
        List<Row> rows = new ArrayList<>();
        for (String key : arg("rows", "unlimited,budget8,budget4,budget1,queue").split(",")) {
            rows.add(Row.parse(key.trim()));
        }
        int repeat = intArg("repeat", 1);
        String schema = arg("schema", "tenants_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8));
        Map<String, String> common = new LinkedHashMap<>(args);
        common.remove("mode");
        common.remove("row");
        common.put("schema", schema);
        log(String.format(Locale.ROOT, "%d tenants x %d pages x %d events; %d docs of %d bytes per event; %d workers;"
                        + " child JVM %s; %s; schema %s", tenants, pages, batch, docsPerEvent, docBytes, workers,
                String.join(" ", jvmFlags()), StoreOptions.redact(url), postgres() ? schema : "(in-memory, per child)"));
        String engineDescription = "H2 (in-memory, inside each child's heap)";
        List<Map<String, String>> results = new ArrayList<>();
        long started = System.nanoTime();
        try {
            if (postgres()) {
                engineDescription = describeDatabase();
                Map<String, String> prepared = child("prepare", null, common);
                if (!"ok".equals(prepared.get("status"))) {
                    throw new IllegalStateException("preparing the events failed: " + prepared);
                }
            }
            for (int run = 1; run <= repeat; run++) {
                for (Row row : rows) {
                    if (postgres()) {
                        tidyDatabase(schema);
                    }
                    Map<String, String> result = child("measure", row, common);
                    result.put("run", Integer.toString(run));
                    result.put("label", row.label(batch));
                    results.add(result);
                    log("row " + row.key() + " (run " + run + "): " + result);
                }
            }
        } finally {
            if (postgres() && !Boolean.parseBoolean(arg("keep", "false"))) {
                try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                    log("dropped schema " + schema);
                } catch (SQLException e) {
                    log("could not drop schema " + schema + ": " + e.getMessage());
                }
            }
        }
        print(engineDescription, results, repeat, (System.nanoTime() - started) / 1e9);
    }

    private List<String> jvmFlags() {
        List<String> flags = new ArrayList<>();
        flags.add("-Xmx" + xmx);
        flags.add("-XX:+Use" + gc + "GC");
        flags.addAll(extraJvm);
        return flags;
    }

    private String describeDatabase() throws SQLException {
        try (Connection c = DriverManager.getConnection(url)) {
            DatabaseMetaData md = c.getMetaData();
            String description = md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT current_setting('shared_buffers'),"
                         + " current_setting('max_connections')")) {
                if (rs.next()) {
                    description += " (shared_buffers " + rs.getString(1) + ", max_connections " + rs.getString(2)
                            + ")";
                }
            }
            return description + ", same machine, its memory outside the measured JVM";
        }
    }

    /** Between children: the dead tuples of the last rebuild vacuumed away and dirty pages flushed. */
    private void tidyDatabase(String schema) throws SQLException {
        TableNames names = new TableNames(schema, "pc_");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("VACUUM ANALYZE " + names.document("sheet") + ", " + names.document("streamsummary") + ", "
                    + names.progression());
            s.execute("CHECKPOINT");
        }
    }

    /** Runs a child JVM, echoes its output, and returns the fields of its RESULT line (or why there is none). */
    private Map<String, String> child(String mode, Row row, Map<String, String> common) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(TenantRebuildHarness.class.getName());
        command.add("mode=" + mode);
        if (row != null) {
            command.add("row=" + row.key());
        }
        common.forEach((k, v) -> command.add(k + "=" + v));
        log("child " + mode + (row == null ? "" : " " + row.key()) + ": " + String.join(" ", jvmFlags()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        Process process = builder.start();
        Map<String, String> result = new LinkedHashMap<>();
        Deque<String> tail = new ArrayDeque<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith(RESULT)) {
                        synchronized (result) {
                            result.putAll(decode(line.substring(RESULT.length())));
                        }
                    } else {
                        System.out.println("    " + line);
                        System.out.flush();
                        synchronized (tail) {
                            tail.addLast(line);
                            if (tail.size() > 20) {
                                tail.removeFirst();
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // the child went away
            }
        }, "child-output");
        reader.setDaemon(true);
        reader.start();
        // the child's own rebuild timeout fires first; this only catches a wedged JVM
        long limitMinutes = 2L * timeout.toMinutes() + 5;
        boolean exited = process.waitFor(limitMinutes, TimeUnit.MINUTES);
        if (!exited) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        synchronized (result) {
            if (result.isEmpty()) {
                String why = !exited ? "killed after " + limitMinutes + " min without a result"
                        : "exited with code " + process.exitValue() + " without a result";
                synchronized (tail) {
                    String last = tail.stream().filter(l -> l.contains("Error") || l.contains("Exception"))
                            .reduce((a, b) -> b).orElse("");
                    result.put("status", "crashed: " + why + (last.isEmpty() ? "" : "; last error: " + last.trim()));
                }
            }
            return new LinkedHashMap<>(result);
        }
    }

    private static String encode(Map<String, String> fields) {
        StringBuilder out = new StringBuilder();
        fields.forEach((k, v) -> out.append(k).append('=')
                .append(v.replace("%", "%25").replace(" ", "%20").replace("\n", "%0A")).append(' '));
        return out.toString().trim();
    }

    private static Map<String, String> decode(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String token : line.trim().split(" ")) {
            int eq = token.indexOf('=');
            if (eq > 0) {
                fields.put(token.substring(0, eq), token.substring(eq + 1).replace("%20", " ").replace("%0A", "\n")
                        .replace("%25", "%"));
            }
        }
        return fields;
    }

    private void print(String engineDescription, List<Map<String, String>> results, int repeat, double seconds) {
        StringBuilder out = new StringBuilder("\n");
        out.append("| Tenant rebuild harness | |\n|---|---|\n");
        fact(out, "Machine", machine());
        fact(out, "JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        fact(out, "Child JVM per row", String.join(" ", jvmFlags()) + " (fresh JVM per configuration)");
        fact(out, "Database", engineDescription);
        fact(out, "Workload", String.format(Locale.ROOT, "%d tenants (events partitioned by tenant) x %d pages of %d"
                        + " events = %,d events; rebuild of a two-stage composite x %d tenants = %d shards at once",
                tenants, pages, batch, (long) tenants * pages * batch, tenants, tenants));
        fact(out, "Stage one (Sheets)", String.format(Locale.ROOT, "%d upserts per event of %,d-byte documents:"
                        + " %,d distinct documents per page, %,d ids per tenant (%,d documents in all)", docsPerEvent,
                docBytes, Math.min((long) batch * docsPerEvent, docsPerTenant), docsPerTenant,
                (long) docsPerTenant * tenants));
        fact(out, "Stage two (Summaries)", streams + " per-stream summaries per tenant, folded from the sheets stage one"
                + " wrote in the same page; both stages are one composite (" + COMPOSITE + "), one shard per tenant");
        fact(out, "Daemon", "SOLO, batchSize " + batch + ", workerThreads " + workers + " (all " + tenants
                + " shards can be in flight), pool " + (workers + 4) + " connections");
        fact(out, "Peak heap", "max of MemoryMXBean heap used sampled every " + sampleMs + " ms in the child,"
                + " from System.gc() before the rebuild until it returned; 'after GC' is the largest heap left in use"
                + " after any collection (GC notifications): an upper bound on the live set, loose under G1, whose"
                + " young collections leave promoted garbage in the old generation until a mixed collection");
        if (liveProbeMs > 0) {
            fact(out, "Live-set probes", "System.gc() every " + liveProbeMs + " ms during the rebuild, heap used right"
                    + " after it: the live set at that moment. Full collections stop the world: rebuild times of this"
                    + " run are not comparable with a run without probes");
        }
        fact(out, "Harness wall time", String.format(Locale.ROOT, "%.0f s", seconds));
        System.out.println(out);

        Map<String, String> unlimited = results.stream().filter(r -> "unlimited".equals(r.get("row"))
                && "ok".equals(r.get("status"))).findFirst().orElse(null);
        boolean live = results.stream().anyMatch(r -> r.containsKey("peakLive"));
        StringBuilder table = new StringBuilder();
        table.append("| Configuration").append(repeat > 1 ? " | Run" : "")
                .append(" | Rebuild time | Peak heap used | vs no limits (time / memory) | Peak heap after GC")
                .append(live ? " | Peak live set (probes) | live vs no limits" : "")
                .append(" | GC pauses | Verified |\n");
        table.append("|---").append(repeat > 1 ? "|---" : "").append("|---:|---:|---:|---:")
                .append(live ? "|---:|---:" : "").append("|---:|---|\n");
        for (Map<String, String> r : results) {
            table.append("| ").append(r.get("label"));
            if (repeat > 1) {
                table.append(" | ").append(r.get("run"));
            }
            if (!"ok".equals(r.get("status"))) {
                table.append(" | ").append(r.getOrDefault("seconds", "-").equals("-") ? "-"
                                : String.format(Locale.ROOT, "%.1f s", Double.parseDouble(r.get("seconds"))))
                        .append(" | ").append(r.containsKey("peakUsed") ? mib(r.get("peakUsed")) : "-")
                        .append(" | - | ").append(r.containsKey("peakAfterGc") ? mib(r.get("peakAfterGc")) : "-")
                        .append(live ? " | " + (r.containsKey("peakLive") ? mib(r.get("peakLive")) : "-") + " | -" : "")
                        .append(" | - | **").append(r.get("status").replace("|", "\\|")).append("** |\n");
                continue;
            }
            double s = Double.parseDouble(r.get("seconds"));
            long peak = Long.parseLong(r.get("peakUsed"));
            String versus = "-";
            String liveVersus = "-";
            if (unlimited != null) {
                // against the no-limits row of the same run when there is one
                Map<String, String> base = results.stream().filter(x -> "unlimited".equals(x.get("row"))
                        && "ok".equals(x.get("status")) && x.get("run").equals(r.get("run"))).findFirst()
                        .orElse(unlimited);
                versus = String.format(Locale.ROOT, "%.2fx / 1/%.1f", s / Double.parseDouble(base.get("seconds")),
                        Double.parseDouble(base.get("peakUsed")) / peak);
                if (live && base.containsKey("peakLive") && r.containsKey("peakLive")) {
                    liveVersus = String.format(Locale.ROOT, "1/%.1f", Double.parseDouble(base.get("peakLive"))
                            / Double.parseDouble(r.get("peakLive")));
                }
            }
            table.append(String.format(Locale.ROOT, " | %.1f s | %s | %s | %s", s, mib(r.get("peakUsed")), versus,
                    mib(r.get("peakAfterGc"))));
            if (live) {
                table.append(" | ").append(r.containsKey("peakLive") ? mib(r.get("peakLive")) : "-").append(" | ")
                        .append(liveVersus);
            }
            table.append(String.format(Locale.ROOT, " | %s (%s ms) | %s |%n", r.get("gcCount"), r.get("gcMillis"),
                    r.get("verified")));
        }
        System.out.println(table);
        System.out.println("CPU during each rebuild: " + results.stream().filter(r -> r.containsKey("cpu"))
                .map(r -> r.get("row") + (repeat > 1 ? "#" + r.get("run") : "") + ": " + r.get("cpu"))
                .reduce((a, b) -> a + "; " + b).orElse("-"));
        System.out.println("Baseline heap after System.gc() before each rebuild: " + results.stream()
                .filter(r -> r.containsKey("baseline")).map(r -> r.get("row") + " " + mib(r.get("baseline")))
                .reduce((a, b) -> a + ", " + b).orElse("-") + "; heap pools' summed peaks (upper bound, peaks at"
                + " different moments): " + results.stream().filter(r -> r.containsKey("poolPeakSum"))
                .map(r -> r.get("row") + " " + mib(r.get("poolPeakSum"))).reduce((a, b) -> a + ", " + b).orElse("-"));
        System.out.flush();
    }

    private static void fact(StringBuilder out, String key, String value) {
        out.append("| ").append(key).append(" | ").append(value.replace("|", "\\|")).append(" |\n");
    }

    private static String mib(String bytes) {
        return String.format(Locale.ROOT, "%,d MiB", Long.parseLong(bytes) >> 20);
    }

    private static String machine() {
        String cpu = "?";
        String ram = "?";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("?");
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            ram = String.format(Locale.ROOT, "%.1f GiB RAM", os.getTotalMemorySize() / (double) (1L << 30));
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), " + ram + ", "
                + System.getProperty("os.name") + " " + System.getProperty("os.version");
    }

    // ------------------------------------------------------------------------------------------------------ children

    private HikariDataSource pool() {
        HikariConfig config = new HikariConfig();
        config.setPoolName("tenants");
        config.setJdbcUrl(url);
        // every worker may hold one connection, plus the detector, the rebuild calls and the checks
        config.setMaximumPoolSize(workers + 4);
        return new HikariDataSource(config);
    }

    private DocumentStore store(HikariDataSource ds, DaemonMode mode, Row row) {
        Consumer<StoreOptions> configure = o -> {
            o.dataSource(ds).applyAllDatabaseChangesOnStartup(true);
            if (postgres()) {
                o.schema(arg("schema", "tenants"));
            }
            o.events().partitionByTenant(true).register(Fanout.class);
            o.projections().add(CompositeProjection.named(COMPOSITE)
                    .stage(new Sheets(docsPerEvent, docsPerTenant, docBytes))
                    .stage(new Summaries(docsPerEvent, docsPerTenant)), Lifecycle.ASYNC);
            o.daemon().mode(mode).batchSize(batch).workerThreads(workers).pollingInterval(Duration.ofMillis(200));
            if (row != null) {
                o.daemon().tenantLoadBudget(row.budgetPages() * batch).maxConcurrentBatchWritesPerDatabase(row.writes())
                        .tenantLoadBudgetMegabytes(row.megabytes());
            }
        };
        return Ferret.createStore(configure);
    }

    static String tenant(int t) {
        return String.format(Locale.ROOT, "t%02d", t);
    }

    /** Appends every tenant's events with the daemon disabled (4 tenants at a time), then catches up once. */
    private void seedAndCatchUp(HikariDataSource ds) throws Exception {
        long started = System.nanoTime();
        String pad = "x".repeat(Math.max(0, eventBytes - 40));
        int perTenant = pages * batch;
        try (DocumentStore writer = store(ds, DaemonMode.DISABLED, null)) {
            ExecutorService appenders = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < tenants; t++) {
                    String tenant = tenant(t);
                    done.add(appenders.submit(() -> {
                        for (int from = 0; from < perTenant; from += batch) {
                            try (DocumentSession session = writer.openSession(tenant)) {
                                Map<String, List<Object>> byStream = new LinkedHashMap<>();
                                for (int i = from; i < Math.min(perTenant, from + batch); i++) {
                                    byStream.computeIfAbsent("stream-" + (i % streams), k -> new ArrayList<>())
                                            .add(new Fanout(i, pad));
                                }
                                byStream.forEach((stream, events) -> session.events().append(stream, events));
                                session.saveChanges();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                appenders.shutdownNow();
            }
        }
        log(String.format(Locale.ROOT, "appended %,d events for %d tenants in %.1f s", (long) perTenant * tenants,
                tenants, (System.nanoTime() - started) / 1e9));
        started = System.nanoTime();
        // the first catch-up, unmeasured: a 4-page budget so it cannot run out of memory
        try (DocumentStore solo = store(ds, DaemonMode.SOLO, Row.parse("budget4"))) {
            solo.waitForNonStaleProjectionData(timeout);
        }
        log(String.format(Locale.ROOT, "first catch-up of the composite in %.1f s", (System.nanoTime() - started)
                / 1e9));
    }

    private void prepareChild() throws Exception {
        try (HikariDataSource ds = pool()) {
            seedAndCatchUp(ds);
            verify(ds);
        }
        System.out.println(RESULT + encode(Map.of("status", "ok")));
        System.out.flush();
    }

    /** Samples heap used, and records the heap left in use after every collection. */
    static final class HeapWatch implements AutoCloseable {
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final List<MemoryPoolMXBean> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        private final AtomicLong peakUsed = new AtomicLong();
        private final AtomicLong peakAfterGc = new AtomicLong();
        private final Map<NotificationEmitter, NotificationListener> listeners = new HashMap<>();
        private final Thread sampler;
        private volatile boolean sampling = true;
        private final long gcCountBefore;
        private final long gcMillisBefore;
        private long samples;
        private final AtomicLong peakLive = new AtomicLong(-1);
        private final Thread prober;

        HeapWatch(int sampleMs, int liveProbeMs) {
            heapPools.forEach(MemoryPoolMXBean::resetPeakUsage);
            for (GarbageCollectorMXBean gcBean : ManagementFactory.getGarbageCollectorMXBeans()) {
                if (gcBean instanceof NotificationEmitter emitter) {
                    NotificationListener listener = (notification, handback) -> {
                        if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION
                                .equals(notification.getType())) {
                            GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo
                                    .from((CompositeData) notification.getUserData());
                            long after = 0;
                            for (Map.Entry<String, MemoryUsage> pool : info.getGcInfo().getMemoryUsageAfterGc()
                                    .entrySet()) {
                                if (isHeap(pool.getKey())) {
                                    after += pool.getValue().getUsed();
                                }
                            }
                            peakAfterGc.accumulateAndGet(after, Math::max);
                        }
                    };
                    emitter.addNotificationListener(listener, null, null);
                    listeners.put(emitter, listener);
                }
            }
            gcCountBefore = gcCount();
            gcMillisBefore = gcMillis();
            peakUsed.set(memory.getHeapMemoryUsage().getUsed());
            sampler = new Thread(() -> {
                while (sampling) {
                    peakUsed.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                    samples++;
                    try {
                        Thread.sleep(sampleMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "heap-sampler");
            sampler.setDaemon(true);
            sampler.setPriority(Thread.MAX_PRIORITY);
            sampler.start();
            if (liveProbeMs > 0) {
                peakLive.set(0);
                prober = new Thread(() -> {
                    while (sampling) {
                        try {
                            Thread.sleep(liveProbeMs);
                        } catch (InterruptedException e) {
                            return;
                        }
                        System.gc();
                        peakLive.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                    }
                }, "live-set-probe");
                prober.setDaemon(true);
                prober.start();
            } else {
                prober = null;
            }
        }

        private boolean isHeap(String poolName) {
            return heapPools.stream().anyMatch(p -> p.getName().equals(poolName));
        }

        private static long gcCount() {
            return ManagementFactory.getGarbageCollectorMXBeans().stream()
                    .mapToLong(GarbageCollectorMXBean::getCollectionCount).filter(c -> c > 0).sum();
        }

        private static long gcMillis() {
            return ManagementFactory.getGarbageCollectorMXBeans().stream()
                    .mapToLong(GarbageCollectorMXBean::getCollectionTime).filter(c -> c > 0).sum();
        }

        /** Stops sampling; the fields of the measurement. */
        Map<String, String> finish() throws InterruptedException {
            sampling = false;
            sampler.interrupt();
            sampler.join();
            if (prober != null) {
                prober.interrupt();
                prober.join();
            }
            peakUsed.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
            long poolPeakSum = heapPools.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("peakUsed", Long.toString(peakUsed.get()));
            fields.put("peakAfterGc", Long.toString(peakAfterGc.get()));
            fields.put("poolPeakSum", Long.toString(poolPeakSum));
            fields.put("gcCount", Long.toString(gcCount() - gcCountBefore));
            fields.put("gcMillis", Long.toString(gcMillis() - gcMillisBefore));
            fields.put("samples", Long.toString(samples));
            if (peakLive.get() >= 0) {
                fields.put("peakLive", Long.toString(peakLive.get()));
            }
            return fields;
        }

        @Override
        public void close() {
            sampling = false;
            listeners.forEach((emitter, listener) -> {
                try {
                    emitter.removeNotificationListener(listener);
                } catch (Exception ignored) {
                    // gone
                }
            });
        }
    }

    /**
     * Where the machine's CPU went during the rebuild (Linux only): this JVM, PostgreSQL's processes, and everything
     * else (another build on the same machine shows up there).
     */
    static final class CpuAccount {
        private static final double HZ = 100.0; // USER_HZ on Linux
        private final long[] before = snapshot();
        private final long wallStart = System.nanoTime();

        /** busy jiffies of the machine, jiffies of postgres processes, this JVM's CPU in ns. */
        private static long[] snapshot() {
            long busy = -1;
            long pg = 0;
            try {
                String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
                busy = 0;
                for (int i = 1; i < cpu.length && i <= 8; i++) {
                    if (i != 4 && i != 5) { // not idle, not iowait
                        busy += Long.parseLong(cpu[i]);
                    }
                }
                try (var dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
                    for (Path dir : dirs) {
                        try {
                            String stat = Files.readString(dir.resolve("stat"));
                            int close = stat.lastIndexOf(')');
                            if (stat.substring(stat.indexOf('(') + 1, close).equals("postgres")) {
                                String[] f = stat.substring(close + 2).split(" ");
                                pg += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                            }
                        } catch (IOException | RuntimeException gone) {
                            // the process ended meanwhile
                        }
                    }
                }
            } catch (IOException | RuntimeException notLinux) {
                busy = -1;
            }
            long jvm = ManagementFactory.getOperatingSystemMXBean()
                    instanceof OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
            return new long[] {busy, pg, jvm};
        }

        /** "jvm X s, postgres Y s, other Z s of N core-seconds". */
        String finish() {
            long[] after = snapshot();
            double wall = (System.nanoTime() - wallStart) / 1e9;
            if (before[0] < 0 || after[0] < 0) {
                return "n/a";
            }
            double busy = (after[0] - before[0]) / HZ;
            double pg = (after[1] - before[1]) / HZ;
            double jvm = (after[2] - before[2]) / 1e9;
            return String.format(Locale.ROOT, "JVM %.0f s, PostgreSQL %.0f s, other %.0f s of %.0f core-s",
                    jvm, pg, Math.max(0, busy - jvm - pg), wall * Runtime.getRuntime().availableProcessors());
        }
    }

    private int measureChild() throws Exception {
        Row row = Row.parse(arg("row", "unlimited"));
        Map<String, String> result = new LinkedHashMap<>();
        result.put("row", row.key());
        int exit = 0;
        try (HikariDataSource ds = pool()) {
            if (!postgres()) {
                seedAndCatchUp(ds);
            }
            DocumentStore store = store(ds, DaemonMode.SOLO, row);
            try {
                // the first detection registers every tenant's shards; they are caught up, so this returns at once
                store.waitForNonStaleProjectionData(timeout);
                DaemonStatus status = store.daemon().status();
                if (status.shards().size() != tenants) {
                    throw new IllegalStateException("expected " + tenants + " shards, found "
                            + status.shards().stream().map(ShardStatus::name).toList());
                }
                for (int i = 0; i < 3; i++) {
                    System.gc();
                }
                Thread.sleep(300);
                result.put("baseline", Long.toString(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage()
                        .getUsed()));
                log("row " + row.key() + ": " + row.label(batch) + "; rebuilding " + COMPOSITE + " (" + STAGE_ONE
                        + ", then " + STAGE_TWO + ") for " + tenants + " tenants at once");
                ExecutorService callers = Executors.newFixedThreadPool(2);
                CountDownLatch go = new CountDownLatch(1);
                AtomicLong lastLog = new AtomicLong(System.nanoTime());
                long started;
                CpuAccount cpu = new CpuAccount();
                try (HeapWatch watch = new HeapWatch(sampleMs, liveProbeMs)) {
                    List<Future<?>> rebuilds = new ArrayList<>();
                    for (String projection : List.of(COMPOSITE)) {
                        rebuilds.add(callers.submit(() -> {
                            go.await();
                            store.daemon().rebuild(projection, timeout, p -> {
                                long now = System.nanoTime();
                                long last = lastLog.get();
                                if (now - last > TimeUnit.SECONDS.toNanos(10) && lastLog.compareAndSet(last, now)) {
                                    log(String.format(Locale.ROOT, "%s: %,d of %,d (%,.0f events/s); heap used %,d MiB",
                                            p.shardName(), p.eventsDone(), p.eventsTotal(), p.eventsPerSecond(),
                                            ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20));
                                }
                            });
                            return null;
                        }));
                    }
                    started = System.nanoTime();
                    go.countDown();
                    Throwable failure = null;
                    for (Future<?> rebuild : rebuilds) {
                        try {
                            rebuild.get();
                        } catch (ExecutionException e) {
                            failure = failure == null ? e.getCause() : failure;
                        }
                    }
                    double seconds = (System.nanoTime() - started) / 1e9;
                    result.put("seconds", String.format(Locale.ROOT, "%.3f", seconds));
                    result.putAll(watch.finish());
                    result.put("cpu", cpu.finish());
                    if (failure != null) {
                        throw failure;
                    }
                } finally {
                    callers.shutdownNow();
                }
                log(String.format(Locale.ROOT, "row %s: rebuilt in %s s, peak heap used %,d MiB (after GC %,d MiB)",
                        row.key(), result.get("seconds"), Long.parseLong(result.get("peakUsed")) >> 20,
                        Long.parseLong(result.get("peakAfterGc")) >> 20));
                result.put("verified", verify(ds));
                result.put("status", "ok");
            } finally {
                store.close();
            }
        } catch (Throwable e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            result.put("status", (root instanceof OutOfMemoryError ? "OutOfMemoryError" : "failed") + ": "
                    + shorten(e.toString()) + (root != e ? " (cause " + shorten(root.toString()) + ")" : ""));
            log("row " + row.key() + " failed: " + e);
            exit = 3;
        }
        System.out.println(RESULT + encode(result));
        System.out.flush();
        return exit;
    }

    private static String shorten(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    // ------------------------------------------------------------------------------------------------------ checks

    /** Per tenant: documents, sum of the event index they hold, documents of the wrong tenant, shortest body. */
    record Tally(long documents, long sum, long wrongTenant, long shortestBody) {
    }

    /**
     * Checks both tables against what the events must produce; returns a short description, throws when they
     * disagree.
     */
    private String verify(HikariDataSource ds) throws Exception {
        int perTenant = pages * batch;
        long[] last = new long[docsPerTenant];
        Arrays.fill(last, -1);
        for (int i = 0; i < perTenant; i++) {
            for (int k = 0; k < docsPerEvent; k++) {
                last[(int) (((long) i * docsPerEvent + k) % docsPerTenant)] = i;
            }
        }
        long expectedSheets = Arrays.stream(last).filter(v -> v >= 0).count();
        long expectedSheetSum = Arrays.stream(last).filter(v -> v >= 0).sum();
        long expectedSummaries = Math.min(streams, perTenant);
        long expectedEventSum = (long) perTenant * (perTenant - 1) / 2;

        TableNames names = new TableNames(postgres() ? arg("schema", "tenants") : "PUBLIC", "pc_");
        Map<String, Tally> sheets;
        Map<String, Tally> summaries;
        Map<String, Tally> summaryCounts;
        if (postgres()) {
            sheets = tallies(ds, "SELECT tenant_id, count(*), sum((data->>'i')::bigint),"
                    + " sum(CASE WHEN data->>'tenant' = tenant_id THEN 0 ELSE 1 END), min(length(data->>'body')) FROM "
                    + names.document("sheet") + " GROUP BY tenant_id");
            summaries = tallies(ds, "SELECT tenant_id, count(*), sum((data->>'sum')::bigint), 0, 0 FROM "
                    + names.document("streamsummary") + " GROUP BY tenant_id");
            summaryCounts = tallies(ds, "SELECT tenant_id, count(*), sum((data->>'count')::bigint), 0, 0 FROM "
                    + names.document("streamsummary") + " GROUP BY tenant_id");
        } else {
            sheets = new TreeMap<>();
            summaries = new TreeMap<>();
            summaryCounts = new TreeMap<>();
            try (JsonbSerializer json = new JsonbSerializer(); Connection c = ds.getConnection();
                 Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("SELECT tenant_id, CAST(data AS VARCHAR) FROM "
                        + names.document("sheet"))) {
                    while (rs.next()) {
                        Sheet sheet = json.fromJson(rs.getString(2), Sheet.class);
                        sheets.merge(rs.getString(1), new Tally(1, sheet.i(),
                                sheet.tenant().equals(rs.getString(1)) ? 0 : 1, sheet.body().length()),
                                TenantRebuildHarness::add);
                    }
                }
                try (ResultSet rs = s.executeQuery("SELECT tenant_id, CAST(data AS VARCHAR) FROM "
                        + names.document("streamsummary"))) {
                    while (rs.next()) {
                        StreamSummary summary = json.fromJson(rs.getString(2), StreamSummary.class);
                        summaries.merge(rs.getString(1), new Tally(1, summary.sum(), 0, 0), TenantRebuildHarness::add);
                        summaryCounts.merge(rs.getString(1), new Tally(1, summary.count(), 0, 0),
                                TenantRebuildHarness::add);
                    }
                }
            }
        }
        List<String> problems = new ArrayList<>();
        for (int t = 0; t < tenants; t++) {
            String tenant = tenant(t);
            Tally sheet = sheets.getOrDefault(tenant, new Tally(0, 0, 0, 0));
            Tally summary = summaries.getOrDefault(tenant, new Tally(0, 0, 0, 0));
            Tally counts = summaryCounts.getOrDefault(tenant, new Tally(0, 0, 0, 0));
            if (sheet.documents() != expectedSheets || sheet.sum() != expectedSheetSum || sheet.wrongTenant() != 0
                    || sheet.shortestBody() != docBytes) {
                problems.add(tenant + " sheets " + sheet + ", expected " + expectedSheets + " documents summing "
                        + expectedSheetSum + " with " + docBytes + "-character bodies");
            }
            if (summary.documents() != expectedSummaries || summary.sum() != expectedEventSum
                    || counts.sum() != perTenant) {
                problems.add(tenant + " summaries " + summary + " counting " + counts.sum() + ", expected "
                        + expectedSummaries + " documents summing " + expectedEventSum + " counting " + perTenant);
            }
        }
        if (sheets.size() != tenants || summaries.size() != tenants) {
            problems.add("documents of " + sheets.size() + " / " + summaries.size() + " tenants, expected " + tenants);
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the rebuilt documents are wrong: " + problems.subList(0,
                    Math.min(5, problems.size())) + (problems.size() > 5 ? " and " + (problems.size() - 5) + " more"
                    : ""));
        }
        String verdict = String.format(Locale.ROOT, "%,d + %,d docs", expectedSheets * tenants,
                expectedSummaries * tenants);
        log("verified: " + verdict + " (sheets hold the right event, tenant and body; summaries count every event)");
        return verdict;
    }

    private static Tally add(Tally a, Tally b) {
        return new Tally(a.documents() + b.documents(), a.sum() + b.sum(), a.wrongTenant() + b.wrongTenant(),
                Math.min(a.shortestBody(), b.shortestBody()));
    }

    private static Map<String, Tally> tallies(HikariDataSource ds, String query) throws SQLException {
        Map<String, Tally> tallies = new TreeMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                tallies.put(rs.getString(1), new Tally(rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
            }
        }
        return tallies;
    }
}
