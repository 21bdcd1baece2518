package dev.ferret.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.Filter;
import dev.ferret.QuerySession;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.runtime.Ferret;
import java.sql.Connection;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.function.IntConsumer;

/**
 * Document queries on {@code documents} documents, without and then with declared indexes: a primary-key load (the
 * floor), a lookup by a unique property, and a range on a number ordered by it with a page of 50. Each query runs
 * {@code runs} times with random arguments (3 times without indexes, where each is a full scan) after up to 20
 * warm-up runs; the figure is the mean. The index build (schema apply over the stored documents) is timed too.
 * Prints a Markdown table.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl bench -am -DskipTests -Pquery verify -Dquery.args="engine=postgres"}.
 * Arguments, space-separated {@code key=value}: {@code engine} (h2 | postgres), {@code url}, {@code documents}
 * (1000000), {@code runs} (200), {@code perSave} (5000).
 */
public final class QueryBenchmark {

    /** The benchmark's document. Public, for JSON-B. */
    public record Item(String id, String sku, String status, long price, String category) {
    }

    private final String url;
    private final int documents;
    private final int runs;
    private final int perSave;
    private final String schema = "bench_q_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final Map<String, String[]> rows = new LinkedHashMap<>();

    private QueryBenchmark(Map<String, String> args) {
        this.url = BenchArgs.url(args, args.getOrDefault("engine", "h2").toLowerCase(Locale.ROOT), "query");
        this.documents = Integer.parseInt(args.getOrDefault("documents", "1000000"));
        this.runs = Integer.parseInt(args.getOrDefault("runs", "200"));
        this.perSave = Integer.parseInt(args.getOrDefault("perSave", "5000"));
    }

    public static void main(String[] argv) throws Exception {
        new QueryBenchmark(BenchArgs.parse(argv)).run();
    }

    private static void log(String message) {
        System.out.printf(Locale.ROOT, "[query %tT] %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }

    private static Item item(int i) {
        return new Item("i-" + i, "sku-" + i, i % 10 == 0 ? "archived" : "active", (i * 7919L) % 1_000_000,
                "c-" + i % 100);
    }

    private DocumentStore store(HikariDataSource ds, boolean indexed) {
        return Ferret.createStore(o -> {
            o.dataSource(ds).schema(schema).applyAllDatabaseChangesOnStartup(true);
            o.documents().register(Item.class);
            if (indexed) {
                o.documents().uniqueIndex(Item.class, "sku").index(Item.class, "price");
            }
            o.daemon().mode(DaemonMode.DISABLED);
        });
    }

    private void run() throws Exception {
        try (HikariDataSource ds = new HikariDataSource(BenchArgs.poolConfig("query", url, 4))) {
            String engine = BenchArgs.engineDescription(ds);
            log("engine " + engine + ", schema " + schema);
            try {
                double fillSeconds;
                try (DocumentStore plain = store(ds, false)) {
                    long started = System.nanoTime();
                    for (int from = 0; from < documents; from += perSave) {
                        try (DocumentSession session = plain.openSession()) {
                            for (int i = from; i < Math.min(documents, from + perSave); i++) {
                                session.store(item(i));
                            }
                            session.saveChanges();
                        }
                        if ((from / perSave) % 40 == 39) {
                            log("stored " + (from + perSave) + " documents");
                        }
                    }
                    fillSeconds = seconds(started);
                    analyze(ds);
                    // each query is a full scan here: a few runs say enough
                    measure(plain, "without", 3);
                }
                long started = System.nanoTime();
                try (DocumentStore indexed = store(ds, true)) {
                    double buildSeconds = seconds(started);
                    analyze(ds);
                    measure(indexed, "with", runs);
                    System.out.println();
                    System.out.printf(Locale.ROOT, "%s, %,d documents (stored in %.0f s), indexes built over them in"
                            + " %.1f s, %d cores, Java %s%n%n", engine, documents, fillSeconds, buildSeconds,
                            Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
                }
                System.out.println("| query | without indexes (mean) | with indexes (mean) |");
                System.out.println("|---|---|---|");
                rows.forEach((query, cells) -> System.out.println("| " + query + " | " + cells[0] + " | "
                        + cells[1] + " |"));
            } finally {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                }
            }
        }
    }

    private void analyze(HikariDataSource ds) throws Exception {
        if (url.startsWith("jdbc:postgresql")) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("ANALYZE " + schema + ".pc_doc_item");
            }
        }
    }

    private void measure(DocumentStore store, String variant, int times) {
        SplittableRandom random = new SplittableRandom(42);
        int column = variant.equals("without") ? 0 : 1;
        try (QuerySession session = store.querySession()) {
            time("load by id (primary key)", column, times, i -> check(session.load(Item.class,
                    "i-" + random.nextInt(documents)).isPresent()));
            time("lookup by `sku` (unique)", column, times, i -> check(session.query(Item.class)
                    .where("sku", "sku-" + random.nextInt(documents)).single() != null));
            time("`price` in a range of 1,000, ordered by price, page of 50", column, times, i -> {
                long from = random.nextLong(999_000);
                List<Item> page = session.query(Item.class).where(Filter.ge("price", from))
                        .where(Filter.lt("price", from + 1_000)).orderBy("price").limit(50).toList();
                check(page.size() <= 50);
            });
        }
    }

    private void time(String query, int column, int times, IntConsumer body) {
        for (int i = 0; i < Math.min(times, 20); i++) {
            body.accept(i);
        }
        long started = System.nanoTime();
        for (int i = 0; i < times; i++) {
            body.accept(i);
        }
        double micros = (System.nanoTime() - started) / 1e3 / times;
        String cell = micros >= 10_000 ? String.format(Locale.ROOT, "%,.0f ms", micros / 1e3)
                : String.format(Locale.ROOT, "%,.0f µs", micros);
        rows.computeIfAbsent(query, q -> new String[] {"", ""})[column] = cell;
        log(String.format(Locale.ROOT, "%s, %s indexes: %s (%d runs)", query, column == 0 ? "without" : "with",
                cell, times));
    }

    private static void check(boolean ok) {
        if (!ok) {
            throw new IllegalStateException("a benchmark query returned a wrong result");
        }
    }

    private static double seconds(long started) {
        return (System.nanoTime() - started) / 1e9;
    }
}
