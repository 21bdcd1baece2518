package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.OutboxStatus;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.RebuildProgress;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The console's verbs against a daemon that records what it was asked; no container, no database. */
class ConsoleActionsTest {

    /** Two tenants' shards of one projection; records every verb it is asked. */
    private static final class RecordingDaemon implements ProjectionDaemon {
        final List<String> calls = new ArrayList<>();
        boolean rebuildTakesLong;

        @Override
        public DaemonStatus status() {
            return new DaemonStatus(DaemonMode.SOLO, true,
                    new HighWaterMarkStatus(20, 20, true, null, Duration.ZERO, List.of()), List.of(shard("Orders:All@t1", "t1", 10), shard("Orders:All@t2", "t2", 20)));
        }

        private static ShardStatus shard(String name, String tenant, long mark) {
            return new ShardStatus(name, ShardState.RUNNING, mark, mark, null, null, Duration.ZERO,
                    OutboxStatus.EMPTY, "Orders", tenant, true);
        }

        @Override
        public void rebuild(String projectionName, Duration timeout, Consumer<RebuildProgress> progress) {
            calls.add("rebuild " + projectionName);
            if (rebuildTakesLong) {
                throw new NonStaleTimeoutException("still rebuilding", Map.of("Orders:All@t1", 5L));
            }
        }

        @Override
        public void rebuild(String projectionName, String tenantId, Duration timeout,
                            Consumer<RebuildProgress> progress) {
            calls.add("rebuild " + projectionName + " " + tenantId);
        }

        @Override
        public void restart(String shardName) {
            calls.add("restart " + shardName);
        }

        @Override
        public void hold(String shardName) {
            calls.add("hold " + shardName);
        }

        @Override
        public List<String> releaseTenant(String tenantId, Duration timeout, Runnable whileReleased) {
            calls.add("release " + tenantId);
            return List.of();
        }

        @Override
        public long skipFailedEvent(String shardName) {
            calls.add("skip " + shardName);
            return 42;
        }

        @Override
        public Map<String, Long> deadLetterCounts() {
            return Map.of();
        }

        @Override
        public List<DeadLetterEvent> deadLetters(String shardName, long afterId, int limit) {
            return List.of();
        }

        @Override
        public boolean discardDeadLetter(String shardName, long deadLetterId) {
            calls.add("discard " + shardName + " " + deadLetterId);
            return false;
        }

        @Override
        public void replayDeadLetter(String shardName, long deadLetterId) {
            calls.add("replay " + shardName + " " + deadLetterId);
        }
    }

    private final RebuildWatch watch = new RebuildWatch();
    private final ConsoleActions actions = new ConsoleActions(watch);
    private final RecordingDaemon daemon = new RecordingDaemon();

    private String run(String action, Map<String, String> parameters, long id) {
        Function<String, String> required = name -> {
            String value = parameters.get(name);
            if (value == null) {
                throw new IllegalArgumentException("the parameter '" + name + "' is required");
            }
            return value;
        };
        return actions.run(daemon, action, parameters::get, required, id, "alice");
    }

    @Test
    void eachVerbCallsTheDaemonOnceAndAnswersWhatHappened() {
        assertThat(run("hold", Map.of("shard", "Orders:All@t1"), -1)).isEqualTo("held");
        assertThat(run("restart", Map.of("shard", "Orders:All@t1"), -1)).isEqualTo("restarted");
        assertThat(run("skip", Map.of("shard", "Orders:All@t1"), -1))
                .isEqualTo("restarted past sequence 42, sent to the dead letters");
        assertThat(run("replay", Map.of("shard", "Orders:All@t1"), 7)).isEqualTo("applied again");
        assertThat(run("discard", Map.of("shard", "Orders:All@t1"), 8)).isEqualTo("already gone");
        assertThat(daemon.calls).containsExactly("hold Orders:All@t1", "restart Orders:All@t1",
                "skip Orders:All@t1", "replay Orders:All@t1 7", "discard Orders:All@t1 8");
        assertThat(ConsoleActions.needsId("replay")).isTrue();
        assertThat(ConsoleActions.needsId("hold")).isFalse();
    }

    @Test
    void aTenantsRebuildWatchesThatTenantsShardsOnlyByTheirTenantField() {
        assertThat(run("rebuild", Map.of("projection", "Orders", "tenant", "t2"), -1)).isEqualTo("done");

        assertThat(daemon.calls).containsExactly("rebuild Orders t2");
        RebuildWatch.Progress progress = watch.progress(Map.of(), 1).get(0);
        assertThat(progress.label()).isEqualTo("Orders (tenant t2)");
        assertThat(progress.total()).as("only t2's mark of 20").isEqualTo(20);
        assertThat(progress.startedBy()).isEqualTo("alice");
    }

    @Test
    void aRebuildStillRunningAfterTheWaitIsReportedAsGoingOnAndWatchedAcrossTenants() {
        daemon.rebuildTakesLong = true;

        assertThat(run("rebuild", Map.of("projection", "Orders"), -1))
                .isEqualTo("started: it goes on in the background");

        assertThat(watch.progress(Map.of(), 1).get(0).total()).isEqualTo(30);
    }

    @Test
    void anUnknownProjectionOrAMissingParameterIsRefusedNamingIt() {
        assertThatThrownBy(() -> run("rebuild", Map.of("projection", "Ordres"), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'Ordres'");
        assertThatThrownBy(() -> run("hold", Map.of(), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'shard'");
        assertThat(daemon.calls).isEmpty();
    }
}
