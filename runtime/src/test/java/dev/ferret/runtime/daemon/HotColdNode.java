package dev.ferret.runtime.daemon;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import java.time.Duration;
import java.util.Set;

/**
 * A HotCold daemon node in a process of its own, for {@link HotColdProcessTest}: runs the tally shard when it holds
 * its lock and prints {@code OWNS <n>} whenever the number of shards it holds changes, until it is killed.
 */
public final class HotColdNode {

    private HotColdNode() {
    }

    public static void main(String[] args) throws Exception {
        reportOwnership(Ferret.createStore(options(args[0], args[1])));
    }

    /** Prints {@code OWNS <n>} whenever the number of shards this node holds changes, until the process ends. */
    static void reportOwnership(DocumentStore store) throws InterruptedException {
        Set<String> last = null;
        while (true) {
            Set<String> owned = ((AsyncDaemon) store.daemon()).ownedShards();
            if (!owned.equals(last)) {
                System.out.println("OWNS " + owned.size());
                System.out.flush();
                last = owned;
            }
            Thread.sleep(50);
        }
    }

    static StoreOptions options(String url, String schema) {
        StoreOptions options = new StoreOptions().connection(url, null, null).schema(schema)
                .applyAllDatabaseChangesOnStartup(true);
        options.events().register(DaemonFixtures.Tick.class);
        options.projections().add(DaemonFixtures.tallySnapshot(), Lifecycle.ASYNC);
        options.daemon().mode(DaemonMode.HOT_COLD)
                .pollingInterval(Duration.ofMillis(50))
                .staleSequenceThreshold(Duration.ofMillis(400))
                .lockAcquireInterval(Duration.ofMillis(100))
                .monitoringInterval(Duration.ofMillis(300))
                .probeTimeout(Duration.ofMillis(200))
                .stopAndDrainTimeout(Duration.ofSeconds(2));
        return options;
    }
}
