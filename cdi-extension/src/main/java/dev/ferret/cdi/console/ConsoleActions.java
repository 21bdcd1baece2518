package dev.ferret.cdi.console;

import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.ShardStatus;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * The console's actions, each one verb of the daemon's public API: hold, restart, skip, rebuild, replay, discard.
 * Answers the outcome the operator reads; a refused action throws (an unknown name {@link IllegalArgumentException},
 * a shard in the wrong state {@link IllegalStateException}). A rebuild started here is followed by
 * {@link RebuildWatch}. Holds no state of its own.
 */
final class ConsoleActions {

    static final List<String> NAMES = List.of("hold", "restart", "skip", "rebuild", "replay", "discard");
    /** How long an action's request waits for a rebuild before answering that it goes on. */
    private static final Duration REBUILD_WAIT = Duration.ofMillis(500);

    private final RebuildWatch rebuilds;

    ConsoleActions(RebuildWatch rebuilds) {
        this.rebuilds = rebuilds;
    }

    /**
     * Runs {@code action} on {@code daemon}; {@code parameter} reads a request parameter, null when absent, and
     * {@code required} one that must be there.
     */
    String run(ProjectionDaemon daemon, String action, Function<String, String> parameter,
               Function<String, String> required, long id, String user) {
        return switch (action) {
            case "hold" -> {
                daemon.hold(required.apply("shard"));
                yield "held";
            }
            case "restart" -> {
                daemon.restart(required.apply("shard"));
                yield "restarted";
            }
            case "skip" -> "restarted past sequence " + daemon.skipFailedEvent(required.apply("shard"))
                    + ", sent to the dead letters";
            case "rebuild" -> rebuild(daemon, required.apply("projection"), parameter.apply("tenant"), user);
            case "replay" -> {
                daemon.replayDeadLetter(required.apply("shard"), id);
                yield "applied again";
            }
            case "discard" -> daemon.discardDeadLetter(required.apply("shard"), id) ? "discarded" : "already gone";
            default -> throw new IllegalArgumentException("no console action " + action);
        };
    }

    /** Whether {@code action} needs a dead letter's id. */
    static boolean needsId(String action) {
        return action.equals("replay") || action.equals("discard");
    }

    private String rebuild(ProjectionDaemon daemon, String projection, String tenant, String user) {
        boolean forTenant = tenant != null && !tenant.isBlank();
        if (daemon.status().shards().stream().noneMatch(s -> projection.equals(s.projection()))) {
            throw new IllegalArgumentException("no async projection named '" + projection + "'");
        }
        String label = forTenant ? projection + " (tenant " + tenant + ")" : projection;
        String outcome = "done";
        try {
            if (forTenant) {
                daemon.rebuild(projection, tenant, REBUILD_WAIT, p -> { });
            } else {
                daemon.rebuild(projection, REBUILD_WAIT);
            }
        } catch (NonStaleTimeoutException e) {
            outcome = "started: it goes on in the background";
        }
        rebuilds.started(label, watched(daemon, projection, forTenant ? tenant : null), System.nanoTime(), user);
        return outcome;
    }

    /** The shards the rebuild runs, read after it started so that a tenant's shard it created is among them. */
    private static List<ShardStatus> watched(ProjectionDaemon daemon, String projection, String tenant) {
        return daemon.status().shards().stream()
                .filter(s -> projection.equals(s.projection()))
                .filter(s -> tenant == null || tenant.equals(s.tenantId()))
                .toList();
    }
}
