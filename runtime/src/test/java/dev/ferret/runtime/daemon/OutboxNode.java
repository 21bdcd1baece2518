package dev.ferret.runtime.daemon;

import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.SideEffectPublisher;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * A HotCold node in a process of its own, for {@link OutboxProcessTest}: runs the outboxed shard when it holds its
 * lock, prints {@code OWNS <n>} when that changes and {@code DELIVERED <id> <sequence>} for each message it publishes,
 * and halts the JVM from an after-commit listener once the page that brings the tally to {@code args[2]} committed:
 * before that page's messages are handed to its dispatcher.
 */
public final class OutboxNode {

    private OutboxNode() {
    }

    public static void main(String[] args) throws Exception {
        long haltAt = Long.parseLong(args[2]);
        AsyncListener halting = new AsyncListener() {
            @Override
            public void afterCommit(QuerySession session, ChangeSet changes) {
                boolean reached = Stream.concat(changes.updated().stream(),
                                changes.inserted().stream())
                        .anyMatch(doc -> doc instanceof Tally tally && tally.count() >= haltAt);
                if (reached) {
                    System.out.println("HALT");
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
            }
        };
        StoreOptions options = options(args[0], args[1], message -> {
            System.out.println("DELIVERED " + message.id() + " "
                    + ((OutboxConformanceTest.Effect) message.payload()).sequence());
            System.out.flush();
        });
        options.projections().asyncListeners().add(halting);
        HotColdNode.reportOwnership(Ferret.createStore(options));
    }

    static StoreOptions options(String url, String schema, SideEffectPublisher publisher) {
        return options(url, schema, publisher, OutboxConformanceTest.outboxed(false));
    }

    /** A node running {@code projection} (the outboxed one, of some version). */
    static StoreOptions options(String url, String schema, SideEffectPublisher publisher,
                                Snapshot<Tally> projection) {
        StoreOptions options = new StoreOptions().connection(url, null, null).schema(schema)
                .applyAllDatabaseChangesOnStartup(true);
        options.events().register(DaemonFixtures.Tick.class).register(DaemonFixtures.Poison.class);
        options.projections().add(projection, Lifecycle.ASYNC).publishMessages(publisher);
        options.daemon().mode(DaemonMode.HOT_COLD)
                .batchSize(5)
                .pollingInterval(Duration.ofMillis(50))
                .staleSequenceThreshold(Duration.ofMillis(400))
                .lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300))
                .probeTimeout(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(2));
        return options;
    }
}
