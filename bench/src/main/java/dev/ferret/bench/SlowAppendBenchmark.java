package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.ConcurrencyException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.dialect.SequencesPassedException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Holes under slow and rolled-back appends (issue 14, part 1): writers append one tick per save; a share of the
 * saves holds its transaction open for seconds (an inline projection sleeping, after the events drew their numbers)
 * and a share rolls back after drawing them. The same workload runs with the daemon off and then on, in one run, and
 * reports plain-append latency for both, how far the mark lagged against the oldest append still open, and checks
 * that every committed event was projected (a skip of a committed event shows as a tally short of the log).
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pslowappends verify -Dslowappends.args="engine=postgres"}.
 * Arguments: {@code engine} (h2 | postgres), {@code url}, {@code writers} (8), {@code seconds} (60 per
 * configuration), {@code warmupSeconds} (10, daemon off, not reported), {@code slowPercent} (2), {@code slowMinMs} (2000), {@code slowMaxMs} (8000),
 * {@code rollbackPercent} (10), {@code pollingMs} (500).
 *
 * <p>Threads: the writers, one sampler reading the daemon's status every 100 ms, and this one. The writers share only
 * the in-flight map and the counters, which are concurrent; each writer owns its slice of the latency array, published
 * to the main thread by its future.
 */
public final class SlowAppendBenchmark {

    /** Makes its append's transaction stay open for {@code millis}, after the event rows drew their numbers. */
    public record Slow(long millis) {
    }

    /** The inline projection that sleeps on {@link Slow}: a projection doing slow work inside the append. */
    public static final class Sleeper extends EventProjection {

        public Sleeper() {
            super("Sleeper");
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            if (event.data() instanceof Slow slow) {
                try {
                    Thread.sleep(slow.millis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted in a slow append", e);
                }
            }
        }
    }

    private static final int SAMPLE_MILLIS = 100;

    private final String url;
    private final int writers;
    private final int seconds;
    private final int warmupSeconds;
    private final int slowPercent;
    private final int slowMinMs;
    private final int slowMaxMs;
    private final int rollbackPercent;
    private final Duration polling;

    private SlowAppendBenchmark(Map<String, String> args) {
        String engine = args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT);
        this.url = BenchArgs.url(args, engine, "slowappends");
        this.writers = Integer.parseInt(args.getOrDefault("writers", "8"));
        this.seconds = Integer.parseInt(args.getOrDefault("seconds", "60"));
        this.warmupSeconds = Integer.parseInt(args.getOrDefault("warmupSeconds", "10"));
        this.slowPercent = Integer.parseInt(args.getOrDefault("slowPercent", "2"));
        this.slowMinMs = Integer.parseInt(args.getOrDefault("slowMinMs", "2000"));
        this.slowMaxMs = Integer.parseInt(args.getOrDefault("slowMaxMs", "8000"));
        this.rollbackPercent = Integer.parseInt(args.getOrDefault("rollbackPercent", "10"));
        this.polling = Duration.ofMillis(Long.parseLong(args.getOrDefault("pollingMs", "500")));
    }

    public static void main(String[] argv) throws Exception {
        new SlowAppendBenchmark(BenchArgs.parse(argv)).run();
    }

    /** One configuration's figures. */
    private record Result(boolean daemon, long plainSaves, long slowSaves, long rolledBack, long passedAppends,
                          double p50Millis, double p99Millis, double maxMillis, long samples, long heldSamples,
                          double maxHeldSeconds, double maxOldestOpenSeconds, long beyondOwner, long skips,
                          long committed, long projected, long committedInSkips) {
    }

    private void run() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setPoolName("slow-append-bench");
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(writers + 8);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            String engine;
            try (Connection c = ds.getConnection()) {
                DatabaseMetaData md = c.getMetaData();
                engine = md.getDatabaseProductName() + " " + md.getDatabaseProductVersion();
            }
            // warm-up, not reported: JIT, pool and server caches, so the first measured configuration is not the slower
            measure(ds, false, warmupSeconds);
            List<Result> results = List.of(measure(ds, false, seconds), measure(ds, true, seconds));
            System.out.printf(Locale.ROOT, "%nSlow appends on %s: %d writers, %d s per configuration, %d%% of saves"
                            + " held %d-%d ms, %d%% rolled back, polling %d ms, %d cores, Java %s%n%n", engine,
                    writers, seconds, slowPercent, slowMinMs, slowMaxMs, rollbackPercent, polling.toMillis(),
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
            System.out.println("| daemon | plain saves | slow | rolled back | passed-before-owned | save p50 | p99 | max"
                    + " | mark held (max) | oldest open append (max) | samples held beyond owner + 2 polls | skips"
                    + " | committed / projected | committed in skipped ranges |");
            System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
            for (Result r : results) {
                System.out.printf(Locale.ROOT, "| %s | %,d | %,d | %,d | %d | %.1f ms | %.1f ms | %.0f ms | %s | %s"
                                + " | %s | %s | %s | %s |%n",
                        r.daemon() ? "on" : "off", r.plainSaves(), r.slowSaves(), r.rolledBack(), r.passedAppends(),
                        r.p50Millis(), r.p99Millis(), r.maxMillis(),
                        r.daemon() ? String.format(Locale.ROOT, "%.1f s", r.maxHeldSeconds()) : "-",
                        r.daemon() ? String.format(Locale.ROOT, "%.1f s", r.maxOldestOpenSeconds()) : "-",
                        r.daemon() ? r.beyondOwner() + " of " + r.samples() : "-",
                        r.daemon() ? Long.toString(r.skips()) : "-",
                        r.daemon() ? String.format(Locale.ROOT, "%,d / %,d", r.committed(), r.projected()) : "-",
                        r.daemon() ? Long.toString(r.committedInSkips()) : "-");
            }
        }
    }

    private Result measure(HikariDataSource ds, boolean daemon, int runSeconds) throws Exception {
        String schema = "slow_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        DocumentStore store = Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.events().register(Tick.class).register(Slow.class);
            o.projections().add(new Sleeper(), Lifecycle.INLINE);
            o.projections().snapshot(Tally.class, Lifecycle.ASYNC, s -> s
                    .create(Tick.class, Tally::create)
                    .apply(Tick.class, Tally::apply));
            o.daemon().mode(daemon ? DaemonMode.SOLO : DaemonMode.DISABLED).pollingInterval(polling);
        });
        // the start of every save still running, by a key of its own: the oldest is the append owning the
        // lowest hole, or younger than it
        Map<Long, Long> openSince = new ConcurrentHashMap<>();
        AtomicLong keys = new AtomicLong();
        LongAdder slow = new LongAdder();
        LongAdder rolledBack = new LongAdder();
        LongAdder passed = new LongAdder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(runSeconds);
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            List<Future<long[]>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                String stream = "writer-" + w;
                done.add(pool.submit(() -> write(store, stream, deadline, openSince, keys, slow, rolledBack,
                        passed)));
            }
            Future<double[]> sampled = daemon ? pool.submit(() -> sample(store, deadline, openSince)) : null;
            long[] all = new long[0];
            for (Future<long[]> f : done) {
                long[] mine = f.get(runSeconds + 60L, TimeUnit.SECONDS);
                long[] merged = Arrays.copyOf(all, all.length + mine.length);
                System.arraycopy(mine, 0, merged, all.length, mine.length);
                all = merged;
            }
            Arrays.sort(all);
            double[] samples = sampled == null ? new double[5] : sampled.get(60, TimeUnit.SECONDS);
            long committed = 0;
            long projected = 0;
            long inSkips = 0;
            long skips = 0;
            if (daemon) {
                store.waitForNonStaleProjectionData(Duration.ofMinutes(3));
                HighWaterMarkStatus hwm = store.daemon().status().highWaterMark();
                skips = hwm.totalSkips();
                try (Connection c = ds.getConnection()) {
                    committed = count(c, "SELECT COUNT(*) FROM " + schema + ".pc_events WHERE type = 'Tick'");
                    projected = tallies(store);
                    for (GapSkip skip : hwm.recentSkips()) {
                        inSkips += count(c, "SELECT COUNT(*) FROM " + schema + ".pc_events WHERE seq_id >= "
                                + skip.fromSequence() + " AND seq_id <= " + skip.toSequence());
                    }
                }
            }
            return new Result(daemon, all.length, slow.sum(), rolledBack.sum(), passed.sum(),
                    all[all.length / 2] / 1e6, all[(int) (all.length * 0.99)] / 1e6, all[all.length - 1] / 1e6,
                    (long) samples[0], (long) samples[1], samples[2], samples[3], (long) samples[4], skips,
                    committed, projected, inSkips);
        } finally {
            pool.shutdownNow();
            store.close();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
        }
    }

    /** One writer until the deadline; returns the latencies of its plain saves, in nanoseconds. */
    private long[] write(DocumentStore store, String stream, long deadline, Map<Long, Long> openSince,
                         AtomicLong keys, LongAdder slow, LongAdder rolledBack, LongAdder passed) {
        long[] nanos = new long[1 << 18];
        int plain = 0;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int n = 0; System.nanoTime() < deadline; n++) {
            int roll = random.nextInt(100);
            boolean isSlow = roll < slowPercent;
            boolean rollBack = !isSlow && roll < slowPercent + rollbackPercent;
            long key = keys.incrementAndGet();
            long began = System.nanoTime();
            openSince.put(key, began);
            try (DocumentSession session = store.openSession()) {
                List<Object> events = new ArrayList<>(2);
                events.add(new Tick(n));
                if (isSlow) {
                    events.add(new Slow(random.nextInt(slowMinMs, slowMaxMs + 1)));
                }
                session.events().append(stream, events);
                if (rollBack) {
                    // the tick above has drawn its number when this fails: a rolled-back hole
                    session.events().append("absent-" + stream, 5, List.of(new Tick(-1)));
                }
                session.saveChanges();
            } catch (ConcurrencyException expected) {
                rolledBack.increment();
                continue;
            } catch (RuntimeException e) {
                if (!passedBeforeOwned(e)) {
                    throw e;
                }
                // an append the detector passed before it registered its number: rolled back, nothing lost
                passed.increment();
                continue;
            } finally {
                openSince.remove(key);
            }
            if (isSlow) {
                slow.increment();
            } else if (plain < nanos.length) {
                nanos[plain++] = System.nanoTime() - began;
            }
        }
        return Arrays.copyOf(nanos, plain);
    }

    /**
     * Every 100 ms until the deadline: how long the mark has stayed where it is while events exist above it, and the
     * age of the oldest save open at any sample of the last two polls (an owner that just ended still explains a mark
     * that has not moved yet: the next detection moves it). Returns samples, samples with the mark held for more than
     * two polls, the longest hold and the oldest open save (seconds), and the samples where the hold exceeded that age
     * by more than two polls (one for the bound, one because the status is as old as the last detection).
     */
    private double[] sample(DocumentStore store, long deadline, Map<Long, Long> openSince) throws Exception {
        long samples = 0;
        long held = 0;
        long beyond = 0;
        double maxHeld = 0;
        double maxOldest = 0;
        long lastMark = -1;
        long movedAt = System.nanoTime();
        long slack = 2 * polling.toNanos();
        // (sample time, oldest start then), for the last two polls
        Deque<long[]> recent = new ArrayDeque<>();
        while (System.nanoTime() < deadline) {
            HighWaterMarkStatus status = store.daemon().status().highWaterMark();
            long now = System.nanoTime();
            long oldestStart = openSince.values().stream().mapToLong(Long::longValue).min().orElse(now);
            recent.addLast(new long[] {now, oldestStart});
            while (recent.peekFirst()[0] < now - slack) {
                recent.removeFirst();
            }
            long recentOldestStart = recent.stream().mapToLong(r -> r[1]).min().orElse(now);
            if (status.mark() != lastMark || status.highestSeen() <= status.mark()) {
                lastMark = status.mark();
                movedAt = now;
            }
            long heldFor = now - movedAt;
            samples++;
            if (heldFor > slack) {
                held++;
            }
            if (heldFor > now - recentOldestStart + slack) {
                beyond++;
            }
            maxHeld = Math.max(maxHeld, heldFor / 1e9);
            maxOldest = Math.max(maxOldest, (now - oldestStart) / 1e9);
            Thread.sleep(SAMPLE_MILLIS);
        }
        return new double[] {samples, held, maxHeld, maxOldest, beyond};
    }

    private static boolean passedBeforeOwned(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SequencesPassedException) {
                return true;
            }
        }
        return false;
    }

    private static long tallies(DocumentStore store) {
        long sum = 0;
        for (Tally tally : store.querySession().query(Tally.class).toList()) {
            sum += tally.count();
        }
        return sum;
    }

    private static long count(Connection c, String sql) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
