package dev.ferret.runtime.daemon;

import dev.ferret.daemon.ShardState;
import dev.ferret.runtime.retry.Backoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's run state: where it stands ({@link State}: a {@link Phase} and whether a rebuild is under way), the
 * one loop run in flight, the retry's due time and the error it stopped or backs off on. Every change goes through
 * {@link #fire} and the table {@link #TABLE}; a (state, event) pair the table does not define is refused, logged
 * and counted as a bug ({@link #refusals()}), and the state stays.
 *
 * <h2>Concurrency</h2>
 * Everything here is guarded by this object's monitor, which is also the agent's lock for its budget line, so a
 * check of the state and the run it guards is one atomic step. {@link #state()} is published through a volatile for
 * status, waiters and the supervisor, which never take the monitor.
 *
 * <h2>Transitions</h2>
 * The table below is rendered by {@link #renderTable()}; a test compares it with this comment and with
 * {@code docs/ARCHITECTURE.md}. A row applies to every rebuild flag unless its effects say otherwise; a state that
 * is rebuilding shows as {@link ShardState#REBUILDING} while it runs.
 *
 * <!-- lifecycle-table -->
 * <pre>
 * | from | event | to | effects | what happens |
 * |---|---|---|---|---|
 * | STOPPED, PAUSED, HELD | START | RUNNING | clear error, reset retry | progression re-read, a run submitted |
 * | PAUSED | SKIP | RUNNING | clear error, reset retry | as START; the refused event goes to the dead letters if it fails again |
 * | RUNNING | WAKE | RUNNING | - | a run submitted unless one is in flight or the shard waits for the budget |
 * | RETRYING | WAKE | RETRYING | - | a run submitted once the back-off is due |
 * | STOPPED, STOPPING, PAUSED, HELD | WAKE | same | - | nothing runs |
 * | RUNNING | PAGE_COMMITTED | RUNNING | - | a turn committed its page, or found nothing to do |
 * | RETRYING | PAGE_COMMITTED | RUNNING | clear error, reset retry | the database answers again |
 * | STOPPED, STOPPING, HELD | PAGE_COMMITTED | same | - | a page the drain let finish, or gave up on, ended |
 * | RUNNING, RETRYING | TRANSIENT_FAILURE | RETRYING | record error, arm retry | back-off timer; the supervisor wakes it when due if the timer is lost |
 * | STOPPED, STOPPING, HELD | TRANSIENT_FAILURE | same | - | a stopping shard never retries; the next owner re-reads the row |
 * | RUNNING, RETRYING | APPLY_FAILED | PAUSED | record error | until START or SKIP |
 * | STOPPED, STOPPING, HELD | APPLY_FAILED | same | - | the page in flight of a stopping shard is re-processed by the next owner |
 * | RUNNING, RETRYING | CONFLICT | PAUSED | record error | another runner moved the progression (SOLO); until START |
 * | STOPPED, STOPPING, HELD | CONFLICT | same | - | the drain cancelled the page |
 * | RUNNING, RETRYING | REQUEST_STOP | STOPPING | - | no page is loaded after the one in flight |
 * | STOPPED, STOPPING, PAUSED, HELD | REQUEST_STOP | same | - | nothing to stop |
 * | RUNNING, RETRYING | LOCK_LOST | STOPPING | - | as REQUEST_STOP, and the outbox stops at once: the new owner delivers |
 * | STOPPED, STOPPING, PAUSED, HELD | LOCK_LOST | same | - | the outbox stops at once |
 * | STOPPING | DRAINED | STOPPED | - | the run ended, or was cancelled at the drain bound and rolled back |
 * | STOPPED, PAUSED, HELD | DRAINED | same | - | a paused or held shard stays so |
 * | STOPPED, PAUSED, HELD | HOLD | HELD | clear error | an operator's pause, after the drain; until START |
 * | STOPPED, PAUSED, HELD | REBUILD | same | mark rebuild | the next START replays from zero |
 * | RUNNING, RETRYING | REBUILD_RESUMED | same | mark rebuild | a start found a rebuild's replay that did not swap: it goes on behind the live tables |
 * | STOPPED, STOPPING, RUNNING, RETRYING, PAUSED, HELD | REBUILD_REACHED | same | end rebuild | the rebuild's target committed: live from here |
 * </pre>
 * <!-- /lifecycle-table -->
 */
final class ShardLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(ShardLifecycle.class);

    /** Where a shard stands, apart from whether it rebuilds. */
    enum Phase {
        STOPPED, STOPPING, RUNNING, RETRYING, PAUSED, HELD;

        /** Whether a run may load pages: a shard in any other phase is stopping or stopped. */
        boolean live() {
            return this == RUNNING || this == RETRYING;
        }
    }

    /** What happens to a shard. */
    enum Event {
        START, SKIP, WAKE, PAGE_COMMITTED, TRANSIENT_FAILURE, APPLY_FAILED, CONFLICT, REQUEST_STOP, LOCK_LOST,
        DRAINED, HOLD, REBUILD, REBUILD_RESUMED, REBUILD_REACHED
    }

    /** What a transition does besides changing the phase. */
    enum Effect {
        CLEAR_ERROR("clear error"), RECORD_ERROR("record error"), RESET_RETRY("reset retry"), ARM_RETRY("arm retry"),
        MARK_REBUILD("mark rebuild"), END_REBUILD("end rebuild");

        private final String label;

        Effect(String label) {
            this.label = label;
        }
    }

    /** The one value a shard's run state is: its phase and whether a rebuild is under way. */
    record State(Phase phase, boolean rebuilding) {

        /** What status shows: a running rebuild as REBUILDING, a stop in progress as the phase before it. */
        ShardState published(Phase beforeStop) {
            return switch (phase) {
                case RUNNING -> rebuilding ? ShardState.REBUILDING : ShardState.RUNNING;
                case RETRYING -> ShardState.RETRYING;
                case STOPPING -> beforeStop == Phase.RETRYING ? ShardState.RETRYING
                        : rebuilding ? ShardState.REBUILDING : ShardState.RUNNING;
                case PAUSED -> ShardState.PAUSED;
                case HELD -> ShardState.HELD;
                case STOPPED -> ShardState.STOPPED;
            };
        }
    }

    /** One line of the table: {@code from} in any of its phases, on {@code event}, goes {@code to} (null: same). */
    record Row(Set<Phase> from, Event event, Phase to, Set<Effect> effects, String note) {

        Phase next(Phase current) {
            return to == null ? current : to;
        }
    }

    static final List<Row> TABLE = List.of(
            row(phases(Phase.STOPPED, Phase.PAUSED, Phase.HELD), Event.START, Phase.RUNNING,
                    EnumSet.of(Effect.CLEAR_ERROR, Effect.RESET_RETRY), "progression re-read, a run submitted"),
            row(phases(Phase.PAUSED), Event.SKIP, Phase.RUNNING, EnumSet.of(Effect.CLEAR_ERROR, Effect.RESET_RETRY),
                    "as START; the refused event goes to the dead letters if it fails again"),
            row(phases(Phase.RUNNING), Event.WAKE, Phase.RUNNING, none(),
                    "a run submitted unless one is in flight or the shard waits for the budget"),
            row(phases(Phase.RETRYING), Event.WAKE, Phase.RETRYING, none(), "a run submitted once the back-off is due"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.PAUSED, Phase.HELD), Event.WAKE, null, none(),
                    "nothing runs"),
            row(phases(Phase.RUNNING), Event.PAGE_COMMITTED, Phase.RUNNING, none(),
                    "a turn committed its page, or found nothing to do"),
            row(phases(Phase.RETRYING), Event.PAGE_COMMITTED, Phase.RUNNING,
                    EnumSet.of(Effect.CLEAR_ERROR, Effect.RESET_RETRY), "the database answers again"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.HELD), Event.PAGE_COMMITTED, null, none(),
                    "a page the drain let finish, or gave up on, ended"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.TRANSIENT_FAILURE, Phase.RETRYING,
                    EnumSet.of(Effect.RECORD_ERROR, Effect.ARM_RETRY),
                    "back-off timer; the supervisor wakes it when due if the timer is lost"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.HELD), Event.TRANSIENT_FAILURE, null, none(),
                    "a stopping shard never retries; the next owner re-reads the row"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.APPLY_FAILED, Phase.PAUSED,
                    EnumSet.of(Effect.RECORD_ERROR), "until START or SKIP"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.HELD), Event.APPLY_FAILED, null, none(),
                    "the page in flight of a stopping shard is re-processed by the next owner"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.CONFLICT, Phase.PAUSED, EnumSet.of(Effect.RECORD_ERROR),
                    "another runner moved the progression (SOLO); until START"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.HELD), Event.CONFLICT, null, none(),
                    "the drain cancelled the page"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.REQUEST_STOP, Phase.STOPPING, none(),
                    "no page is loaded after the one in flight"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.PAUSED, Phase.HELD), Event.REQUEST_STOP, null, none(),
                    "nothing to stop"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.LOCK_LOST, Phase.STOPPING, none(),
                    "as REQUEST_STOP, and the outbox stops at once: the new owner delivers"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.PAUSED, Phase.HELD), Event.LOCK_LOST, null, none(),
                    "the outbox stops at once"),
            row(phases(Phase.STOPPING), Event.DRAINED, Phase.STOPPED, none(),
                    "the run ended, or was cancelled at the drain bound and rolled back"),
            row(phases(Phase.STOPPED, Phase.PAUSED, Phase.HELD), Event.DRAINED, null, none(),
                    "a paused or held shard stays so"),
            row(phases(Phase.STOPPED, Phase.PAUSED, Phase.HELD), Event.HOLD, Phase.HELD, EnumSet.of(Effect.CLEAR_ERROR),
                    "an operator's pause, after the drain; until START"),
            row(phases(Phase.STOPPED, Phase.PAUSED, Phase.HELD), Event.REBUILD, null, EnumSet.of(Effect.MARK_REBUILD),
                    "the next START replays from zero"),
            row(phases(Phase.RUNNING, Phase.RETRYING), Event.REBUILD_RESUMED, null, EnumSet.of(Effect.MARK_REBUILD),
                    "a start found a rebuild's replay that did not swap: it goes on behind the live tables"),
            row(phases(Phase.STOPPED, Phase.STOPPING, Phase.RUNNING, Phase.RETRYING, Phase.PAUSED, Phase.HELD),
                    Event.REBUILD_REACHED, null, EnumSet.of(Effect.END_REBUILD),
                    "the rebuild's target committed: live from here"));

    private static final Map<Phase, Map<Event, Row>> INDEX = index(TABLE);
    private static final AtomicLong REFUSED_IN_JVM = new AtomicLong();

    private final String shard;
    private final Backoff.Attempts backoff;
    private final Consumer<ShardState> column;

    // guarded by this
    private State current = new State(Phase.STOPPED, false);
    private Phase beforeStop = Phase.STOPPED;
    private LoopRun run;
    private long retryDueNanos;
    private Throwable error;
    private long refusals;

    private volatile ShardState published = ShardState.STOPPED;
    private volatile boolean stopping = true;
    private volatile boolean rebuilding;
    private volatile Throwable publishedError;

    ShardLifecycle(String shard, Backoff.Attempts backoff) {
        this(shard, backoff, state -> { });
    }

    /** {@code column} is told every state status shows from now on (the summary's column), under the monitor. */
    ShardLifecycle(String shard, Backoff.Attempts backoff, Consumer<ShardState> column) {
        this.shard = shard;
        this.backoff = backoff;
        this.column = column;
    }

    /**
     * Applies {@code event}: returns the new state, or empty when the table has no row for the pair, which is a bug
     * in the caller: logged, counted, and the state stays.
     */
    synchronized Optional<State> fire(Event event) {
        return fire(event, null, 0);
    }

    /** As {@link #fire(Event)}, with the failure a RECORD_ERROR row records, and the time an ARM_RETRY row arms from. */
    synchronized Optional<State> fire(Event event, Throwable cause, long nowNanos) {
        Row row = INDEX.get(current.phase()).get(event);
        if (row == null) {
            refusals++;
            REFUSED_IN_JVM.incrementAndGet();
            LOG.error("Shard {} refused lifecycle event {} in state {}: no transition is defined for it (a bug);"
                    + " the state stays", shard, event, current, new IllegalStateException("refused " + event));
            return Optional.empty();
        }
        Phase next = row.next(current.phase());
        boolean rebuild = current.rebuilding();
        for (Effect effect : row.effects()) {
            switch (effect) {
                case CLEAR_ERROR -> error = null;
                case RECORD_ERROR -> error = cause;
                case RESET_RETRY -> backoff.reset();
                case ARM_RETRY -> retryDueNanos = nowNanos + backoff.next().toNanos();
                case MARK_REBUILD -> rebuild = true;
                case END_REBUILD -> rebuild = false;
            }
        }
        if (next == Phase.STOPPING && current.phase() != Phase.STOPPING) {
            beforeStop = current.phase();
        }
        if (next != current.phase() || rebuild != current.rebuilding()) {
            current = new State(next, rebuild);
        }
        published = current.published(beforeStop);
        column.accept(published);
        stopping = !next.live();
        rebuilding = rebuild;
        publishedError = error;
        return Optional.of(current);
    }

    synchronized State current() {
        return current;
    }

    /** The state status shows, read without the monitor. */
    ShardState state() {
        return published;
    }

    /** Whether the shard is stopping, stopped, paused or held: no page may start and no failure is retried. */
    boolean stopping() {
        return stopping;
    }

    boolean rebuilding() {
        return rebuilding;
    }

    Throwable error() {
        return publishedError;
    }

    /** Reading the error with the monitor held, for a check and an action that must agree. */
    synchronized Throwable errorNow() {
        return error;
    }

    /** When the back-off armed by the last TRANSIENT_FAILURE is due; a time source reading. */
    synchronized long retryDueNanos() {
        return retryDueNanos;
    }

    /** Whether a run may be submitted now: the phase runs (a retry once due), and no run is in flight. */
    synchronized boolean wakeable(long nowNanos) {
        Phase phase = current.phase();
        return run == null && (phase == Phase.RUNNING || phase == Phase.RETRYING && nowNanos - retryDueNanos >= 0);
    }

    /** Records {@code next} as the run in flight when {@link #wakeable}; returns whether it did. */
    synchronized boolean claim(LoopRun next, long nowNanos) {
        if (!wakeable(nowNanos)) {
            return false;
        }
        run = next;
        return true;
    }

    /** Clears {@code ended} as the run in flight, if it still is; returns whether it was. */
    synchronized boolean release(LoopRun ended) {
        if (run != ended) {
            return false;
        }
        run = null;
        return true;
    }

    synchronized LoopRun run() {
        return run;
    }

    /** The pairs refused by this shard. */
    synchronized long refusals() {
        return refusals;
    }

    /** The pairs refused by every shard of this JVM: a test asserts that none was. */
    static long refusedInJvm() {
        return REFUSED_IN_JVM.get();
    }

    /** The table as Markdown, as the class comment and {@code docs/ARCHITECTURE.md} show it. */
    static String renderTable() {
        StringBuilder out = new StringBuilder("| from | event | to | effects | what happens |\n|---|---|---|---|---|\n");
        for (Row row : TABLE) {
            out.append("| ").append(row.from().stream().map(Enum::name).collect(Collectors.joining(", ")))
                    .append(" | ").append(row.event())
                    .append(" | ").append(row.to() == null ? "same" : row.to().name())
                    .append(" | ").append(row.effects().isEmpty() ? "-" : row.effects().stream()
                            .map(e -> e.label).collect(Collectors.joining(", ")))
                    .append(" | ").append(row.note()).append(" |\n");
        }
        return out.toString();
    }

    /** Every pair the table leaves undefined, in phase then event order. */
    static List<Map.Entry<Phase, Event>> refusedPairs() {
        List<Map.Entry<Phase, Event>> refused = new ArrayList<>();
        for (Phase phase : Phase.values()) {
            for (Event event : Event.values()) {
                if (!INDEX.get(phase).containsKey(event)) {
                    refused.add(Map.entry(phase, event));
                }
            }
        }
        return refused;
    }

    private static Row row(Set<Phase> from, Event event, Phase to, Set<Effect> effects, String note) {
        return new Row(from, event, to, effects, note);
    }

    private static Set<Phase> phases(Phase... phases) {
        return new LinkedHashSet<>(List.of(phases));
    }

    private static Set<Effect> none() {
        return EnumSet.noneOf(Effect.class);
    }

    private static Map<Phase, Map<Event, Row>> index(List<Row> table) {
        Map<Phase, Map<Event, Row>> index = new EnumMap<>(Phase.class);
        for (Phase phase : Phase.values()) {
            index.put(phase, new EnumMap<>(Event.class));
        }
        for (Row row : table) {
            for (Phase from : row.from()) {
                if (index.get(from).put(row.event(), row) != null) {
                    throw new IllegalStateException("two rows for " + from + " on " + row.event());
                }
            }
        }
        return index;
    }

    /** How long the back-off armed last waits; for the log line. */
    synchronized Duration retryDelay(long nowNanos) {
        return Duration.ofNanos(Math.max(0, retryDueNanos - nowNanos));
    }
}
