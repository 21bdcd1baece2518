package dev.ferret.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.EventEnvelope;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.StoreSeams;
import dev.ferret.runtime.daemon.AsyncDaemon;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * HotCold failover: two nodes (separate pools) on one store run one shard; a steady trickle of appends goes on;
 * the lock session of the node holding the shard is killed from outside, {@code kills} times. Measures the time
 * from each kill to the first event applied that was appended after it (the shard processing again, on either
 * node), and counts events applied more than once.
 *
 * <p>Arguments ({@code key=value}): {@code engine} (postgres | h2), {@code url}, {@code kills} (10),
 * {@code monitoring} ms (5000), {@code probe} ms (3000), {@code acquire} ms (1000), {@code drain} ms (5000).
 */
public final class FailoverBenchmark {

    private final Map<String, String> args;
    private final Map<Long, AtomicInteger> applications = new ConcurrentHashMap<>();
    private final AtomicLong lastAppliedAppendNanos = new AtomicLong();
    private final Map<Long, Long> appendedAt = new ConcurrentHashMap<>();

    private FailoverBenchmark(String[] argv) {
        this.args = BenchArgs.parse(argv);
    }

    private String arg(String key, String fallback) {
        return args.getOrDefault(key, fallback);
    }

    private long millis(String key, long fallback) {
        return Long.parseLong(arg(key, Long.toString(fallback)));
    }

    public record Beat(int n) {
    }

    public record BeatCount(String id, long count) {
    }

    /** Records every application, and when the applied event had been appended. */
    final class Recorder extends EventProjection {
        Recorder() {
            super("Failover", BeatCount.class);
        }

        @Override
        public void apply(EventEnvelope event, DocumentOperations operations) {
            // committed state in the same shard: a count that shows any event committed twice or lost
            long count = operations.load(BeatCount.class, "beats").map(BeatCount::count).orElse(0L);
            operations.store(new BeatCount("beats", count + 1));
            applications.computeIfAbsent(event.sequence(), k -> new AtomicInteger()).incrementAndGet();
            Long at = appendedAt.get((long) ((Beat) event.data()).n());
            if (at != null) {
                lastAppliedAppendNanos.accumulateAndGet(at, Math::max);
            }
        }
    }

    public static void main(String[] argv) throws Exception {
        new FailoverBenchmark(argv).run();
    }

    private void run() throws Exception {
        String engine = arg("engine", "postgres").toLowerCase(Locale.ROOT);
        String url = BenchArgs.url(args, engine, "failover");
        String schema = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        int kills = Integer.parseInt(arg("kills", "10"));
        HikariDataSource admin = pool(url, "admin");
        List<DocumentStore> nodes = new ArrayList<>();
        try {
            for (String name : List.of("node-a", "node-b")) {
                StoreOptions options = new StoreOptions().dataSource(pool(url, name)).schema(schema)
                        .applyAllDatabaseChangesOnStartup(true);
                options.events().register(Beat.class);
                options.projections().add(new Recorder(), Lifecycle.ASYNC);

                options.daemon().mode(DaemonMode.HOT_COLD).pollingInterval(Duration.ofMillis(100))
                        .monitoringInterval(Duration.ofMillis(millis("monitoring", 5000)))
                        .probeTimeout(Duration.ofMillis(millis("probe", 3000)))
                        .lockAcquireInterval(Duration.ofMillis(millis("acquire", 1000)))
                        .stopAndDrainTimeout(Duration.ofMillis(millis("drain", 5000)));
                nodes.add(Ferret.createStore(options, StoreSeams.defaults()));
            }
            AtomicInteger beat = new AtomicInteger();
            Thread appender = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    int n = beat.incrementAndGet();
                    appendedAt.put((long) n, System.nanoTime());
                    try (DocumentSession session = nodes.get(0).openSession()) {
                        session.events().append("beats", new Beat(n));
                        session.saveChanges();
                    } catch (RuntimeException e) {
                        // a pooled connection killed with a session; the next beat goes on
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "appender");
            appender.start();

            List<Double> failovers = new ArrayList<>();
            List<Double> detections = new ArrayList<>();
            for (int kill = 1; kill <= kills; kill++) {
                DocumentStore holder = awaitHolder(nodes);
                Thread.sleep(1_000);
                long session = ((AsyncDaemon) holder.daemon()).lockSessionId();
                long killedAt = System.nanoTime();
                try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
                    s.execute(engine.equals("h2") ? "CALL ABORT_SESSION(" + session + ")"
                            : "SELECT pg_terminate_backend(" + session + ")");
                }
                // the killed node keeps its workers' sessions: it runs on until its monitor sees the lock gone
                while (!((AsyncDaemon) holder.daemon()).ownedShards().isEmpty()) {
                    Thread.sleep(5);
                }
                double detected = (System.nanoTime() - killedAt) / 1e9;
                long stoppedAt = System.nanoTime();
                while (lastAppliedAppendNanos.get() < stoppedAt || ownerCount(nodes) != 1) {
                    Thread.sleep(5);
                }
                double seconds = (System.nanoTime() - killedAt) / 1e9;
                detections.add(detected);
                failovers.add(seconds);
                System.out.printf("kill %d: old owner stopped after %.2f s, one owner processing again after %.2f s%n",
                        kill, detected, seconds);
            }
            appender.interrupt();
            appender.join();
            for (DocumentStore node : nodes) {
                node.waitForNonStaleProjectionData(Duration.ofMinutes(2));
            }
            long committedEvents = nodes.get(0).querySession().fetchStream("beats").size();
            long counted = nodes.get(0).querySession().load(BeatCount.class, "beats").map(BeatCount::count)
                    .orElse(0L);
            long duplicates = applications.values().stream().filter(c -> c.get() > 1).count();
            failovers.sort(Double::compare);
            detections.sort(Double::compare);
            System.out.println();
            System.out.println("| HotCold failover | " + engine + " |");
            System.out.println("|---|---|");
            System.out.printf("| Machine | %d cores, Java %s |%n", Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.version"));
            System.out.printf("| Settings | monitoring %d ms, probe %d ms, acquire %d ms, drain %d ms |%n",
                    millis("monitoring", 5000), millis("probe", 3000), millis("acquire", 1000),
                    millis("drain", 5000));
            System.out.printf("| Kills | %d, appends every 20 ms |%n", kills);
            System.out.printf("| Kill to the old owner stopping the shard (monitor): median / max | %.2f s / %.2f s |%n",
                    detections.get(detections.size() / 2), detections.get(detections.size() - 1));
            System.out.printf("| Kill to one owner processing again: median / max | %.2f s / %.2f s |%n",
                    failovers.get(failovers.size() / 2), failovers.get(failovers.size() - 1));
            System.out.printf("| Events applied more than once (attempts, including pages the progression fence"
                    + " rolled back) | %d of %d |%n", duplicates, applications.size());
            System.out.printf("| Committed fold: events counted by the snapshot / events in the stream | %d / %d |%n",
                    counted, committedEvents);
        } finally {
            nodes.forEach(DocumentStore::close);
            try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
                s.execute(engine.equals("h2") ? "DROP ALL OBJECTS" : "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
            admin.close();
        }
    }

    private static int ownerCount(List<DocumentStore> nodes) {
        int owners = 0;
        for (DocumentStore node : nodes) {
            owners += ((AsyncDaemon) node.daemon()).ownedShards().isEmpty() ? 0 : 1;
        }
        return owners;
    }

    private static DocumentStore awaitHolder(List<DocumentStore> nodes) throws InterruptedException {
        while (true) {
            for (DocumentStore node : nodes) {
                if (!((AsyncDaemon) node.daemon()).ownedShards().isEmpty()) {
                    return node;
                }
            }
            Thread.sleep(20);
        }
    }

    private static HikariDataSource pool(String url, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setPoolName(name);
        config.setMaximumPoolSize(6);
        return new HikariDataSource(config);
    }
}
