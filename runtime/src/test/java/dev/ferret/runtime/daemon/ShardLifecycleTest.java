package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.ShardState;
import dev.ferret.runtime.daemon.ShardLifecycle.Effect;
import dev.ferret.runtime.daemon.ShardLifecycle.Event;
import dev.ferret.runtime.daemon.ShardLifecycle.Phase;
import dev.ferret.runtime.daemon.ShardLifecycle.Row;
import dev.ferret.runtime.daemon.ShardLifecycle.State;
import dev.ferret.runtime.retry.Backoff;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The shard lifecycle's table, executed row by row without a database, and compared with its two documents. */
class ShardLifecycleTest {

    private static final Duration FIRST_RETRY = Duration.ofMillis(100);

    private static ShardLifecycle lifecycle() {
        return new ShardLifecycle("orders:All", new Backoff(FIRST_RETRY, Duration.ofSeconds(5)).attempts());
    }

    /** A lifecycle driven from STOPPED to {@code phase}, rebuilding or not, through defined transitions only. */
    private static ShardLifecycle in(Phase phase, boolean rebuilding) {
        ShardLifecycle lifecycle = lifecycle();
        if (rebuilding) {
            lifecycle.fire(Event.REBUILD);
        }
        List<Event> path = switch (phase) {
            case STOPPED -> List.of();
            case RUNNING -> List.of(Event.START);
            case RETRYING -> List.of(Event.START, Event.TRANSIENT_FAILURE);
            case STOPPING -> List.of(Event.START, Event.REQUEST_STOP);
            case PAUSED -> List.of(Event.START, Event.APPLY_FAILED);
            case HELD -> List.of(Event.HOLD);
        };
        for (Event event : path) {
            assertThat(lifecycle.fire(event, new RuntimeException("setup"), 0)).isPresent();
        }
        assertThat(lifecycle.current()).isEqualTo(new State(phase, rebuilding));
        return lifecycle;
    }

    @Test
    void everyRowMovesEveryStateItNamesAsItSays() {
        int checked = 0;
        for (Row row : ShardLifecycle.TABLE) {
            for (Phase from : row.from()) {
                for (boolean rebuilding : new boolean[] {false, true}) {
                    ShardLifecycle lifecycle = in(from, rebuilding);
                    RuntimeException cause = new RuntimeException("cause of " + row.event());
                    long refusalsBefore = lifecycle.refusals();

                    Optional<State> next = lifecycle.fire(row.event(), cause, 1_000);

                    boolean rebuildAfter = row.effects().contains(Effect.MARK_REBUILD) || rebuilding
                            && !row.effects().contains(Effect.END_REBUILD);
                    State expected = new State(row.to() == null ? from : row.to(), rebuildAfter);
                    assertThat(next).as("%s %s on %s", from, rebuilding ? "rebuilding" : "live", row.event())
                            .contains(expected);
                    assertThat(lifecycle.current()).isEqualTo(expected);
                    assertThat(lifecycle.refusals()).isEqualTo(refusalsBefore);
                    assertThat(lifecycle.stopping()).isEqualTo(!expected.phase().live());
                    assertThat(lifecycle.rebuilding()).isEqualTo(rebuildAfter);
                    if (row.effects().contains(Effect.RECORD_ERROR)) {
                        assertThat(lifecycle.error()).isSameAs(cause);
                    }
                    if (row.effects().contains(Effect.CLEAR_ERROR)) {
                        assertThat(lifecycle.error()).isNull();
                    }
                    if (row.effects().contains(Effect.ARM_RETRY)) {
                        assertThat(lifecycle.retryDueNanos()).isGreaterThan(1_000);
                        assertThat(lifecycle.wakeable(1_000)).isFalse();
                        assertThat(lifecycle.wakeable(lifecycle.retryDueNanos())).isTrue();
                    }
                    checked++;
                }
            }
        }
        assertThat(checked).isEqualTo(2 * ShardLifecycle.TABLE.stream().mapToInt(r -> r.from().size()).sum());
    }

    @Test
    void everyPairTheTableLeavesOutIsRefusedCountedAndChangesNothing() {
        List<Map.Entry<Phase, Event>> refused = ShardLifecycle.refusedPairs();
        assertThat(refused).isNotEmpty();
        assertThat(refused).contains(Map.entry(Phase.RUNNING, Event.START), Map.entry(Phase.RUNNING, Event.DRAINED),
                Map.entry(Phase.STOPPING, Event.START), Map.entry(Phase.RUNNING, Event.SKIP));
        for (Map.Entry<Phase, Event> pair : refused) {
            for (boolean rebuilding : new boolean[] {false, true}) {
                ShardLifecycle lifecycle = in(pair.getKey(), rebuilding);
                State before = lifecycle.current();
                ShardState publishedBefore = lifecycle.state();
                Throwable errorBefore = lifecycle.error();
                long inJvm = ShardLifecycle.refusedInJvm();

                assertThat(lifecycle.fire(pair.getValue(), new RuntimeException("refused"), 5)).isEmpty();

                assertThat(lifecycle.current()).isEqualTo(before);
                assertThat(lifecycle.state()).isEqualTo(publishedBefore);
                assertThat(lifecycle.error()).isSameAs(errorBefore);
                assertThat(lifecycle.refusals()).isEqualTo(1);
                assertThat(ShardLifecycle.refusedInJvm()).isGreaterThan(inJvm);
            }
        }
        int pairs = Phase.values().length * Event.values().length;
        int defined = ShardLifecycle.TABLE.stream().mapToInt(r -> r.from().size()).sum();
        assertThat(refused).hasSize(pairs - defined);
    }

    @Test
    void statusShowsARunningRebuildAsRebuildingAndAStopAsThePhaseBeforeIt() {
        assertThat(in(Phase.RUNNING, true).state()).isEqualTo(ShardState.REBUILDING);
        assertThat(in(Phase.RUNNING, false).state()).isEqualTo(ShardState.RUNNING);
        assertThat(in(Phase.RETRYING, true).state()).isEqualTo(ShardState.RETRYING);
        assertThat(in(Phase.STOPPING, true).state()).isEqualTo(ShardState.REBUILDING);
        assertThat(in(Phase.STOPPING, false).state()).isEqualTo(ShardState.RUNNING);
        assertThat(in(Phase.PAUSED, true).state()).isEqualTo(ShardState.PAUSED);
        assertThat(in(Phase.HELD, false).state()).isEqualTo(ShardState.HELD);
        assertThat(in(Phase.STOPPED, true).state()).isEqualTo(ShardState.STOPPED);

        ShardLifecycle retrying = in(Phase.RETRYING, false);
        retrying.fire(Event.REQUEST_STOP);
        assertThat(retrying.state()).isEqualTo(ShardState.RETRYING);
        retrying.fire(Event.DRAINED);
        assertThat(retrying.state()).isEqualTo(ShardState.STOPPED);
    }

    @Test
    void aRestartIsRequestStopDrainedStartAndAHoldKeepsNoError() {
        ShardLifecycle lifecycle = in(Phase.PAUSED, false);
        assertThat(lifecycle.error()).isNotNull();
        lifecycle.fire(Event.REQUEST_STOP);
        lifecycle.fire(Event.DRAINED);
        assertThat(lifecycle.current()).isEqualTo(new State(Phase.PAUSED, false));
        lifecycle.fire(Event.HOLD);
        assertThat(lifecycle.current()).isEqualTo(new State(Phase.HELD, false));
        assertThat(lifecycle.error()).isNull();
        lifecycle.fire(Event.START);
        assertThat(lifecycle.current()).isEqualTo(new State(Phase.RUNNING, false));
        assertThat(lifecycle.refusals()).isZero();
    }

    @Test
    void theBackOffDoublesWhileRetryingAndStartsOverOnceAPageCommits() {
        ShardLifecycle lifecycle = in(Phase.RUNNING, false);
        lifecycle.fire(Event.TRANSIENT_FAILURE, new RuntimeException("down"), 0);
        assertThat(lifecycle.retryDueNanos()).isEqualTo(FIRST_RETRY.toNanos());
        lifecycle.fire(Event.TRANSIENT_FAILURE, new RuntimeException("down"), 0);
        assertThat(lifecycle.retryDueNanos()).isEqualTo(FIRST_RETRY.multipliedBy(2).toNanos());
        lifecycle.fire(Event.PAGE_COMMITTED);
        lifecycle.fire(Event.TRANSIENT_FAILURE, new RuntimeException("down"), 0);
        assertThat(lifecycle.retryDueNanos()).isEqualTo(FIRST_RETRY.toNanos());
    }

    @Test
    void theRunInFlightIsClaimedOnceAndReleasedOnlyByItself() {
        ShardLifecycle lifecycle = in(Phase.RUNNING, false);
        LoopRun first = new LoopRun(lifecycle, () -> { }, 0, () -> { });
        LoopRun second = new LoopRun(lifecycle, () -> { }, 0, () -> { });
        assertThat(lifecycle.claim(first, 0)).isTrue();
        assertThat(lifecycle.claim(second, 0)).isFalse();
        assertThat(lifecycle.release(second)).isFalse();
        assertThat(lifecycle.run()).isSameAs(first);
        assertThat(lifecycle.release(first)).isTrue();
        assertThat(lifecycle.run()).isNull();
        lifecycle.fire(Event.REQUEST_STOP);
        assertThat(lifecycle.claim(second, 0)).isFalse();
    }

    @Test
    void theClassCommentShowsTheTableAsItRuns() throws IOException {
        Path source = Path.of("src", "main", "java", "dev", "ferret", "runtime", "daemon", "ShardLifecycle.java");
        String block = between(Files.readString(source), "<!-- lifecycle-table -->", "<!-- /lifecycle-table -->");
        String table = block.lines().map(line -> line.replaceFirst("^\\s*\\*\\s?", ""))
                .filter(line -> !line.isBlank() && !line.startsWith("<pre>") && !line.startsWith("</pre>"))
                .collect(Collectors.joining("\n", "", "\n"));
        assertThat(table).isEqualTo(ShardLifecycle.renderTable());
    }

    @Test
    void theArchitectureGuideShowsTheTableAsItRuns() throws IOException {
        String block = between(Files.readString(Path.of("..", "docs", "ARCHITECTURE.md")),
                "<!-- lifecycle-table -->", "<!-- /lifecycle-table -->");
        String table = block.lines().filter(line -> !line.isBlank()).collect(Collectors.joining("\n", "", "\n"));
        assertThat(table).isEqualTo(ShardLifecycle.renderTable());
    }

    private static String between(String text, String open, String close) {
        int from = text.indexOf(open);
        int to = text.indexOf(close);
        assertThat(from).as("marker %s", open).isNotNegative();
        assertThat(to).as("marker %s", close).isGreaterThan(from);
        List<String> lines = new ArrayList<>(text.substring(from + open.length(), to).lines().toList());
        return String.join("\n", lines);
    }
}
