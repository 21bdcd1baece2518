package dev.ferret.cdi.health;

import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import java.util.List;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;

/**
 * Reports every shard ({@code <shard>.state}, {@code .progression}, {@code .lag}, {@code .sinceLastCommitMs},
 * {@code .error}), the high water mark and the detector's heartbeat age; DOWN, with each {@code problem.<n>} naming
 * why, while the daemon cannot heal by itself: a shard is paused on an error (it needs
 * {@code daemon().restart(shard)} or a fix and a redeploy), the detector has finished no cycle within its bound, a
 * HotCold lock round is overdue, or a shard that should run has committed nothing for
 * {@code ferret.daemon.stalled-shard-threshold}. A shard retrying a lost database stays UP: it heals by itself.
 * Each call also re-arms any daemon loop the container refused or dropped (see {@code ProjectionDaemon.status()}).
 */
@Liveness
@ApplicationScoped
public class FerretLivenessCheck implements HealthCheck {

    @Inject
    FerretStoreLifecycle lifecycle;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("ferret-daemon");
        var store = lifecycle.storeIfStarted();
        if (store == null) {
            // not started yet (or stopping): readiness says so; liveness must not restart a starting server
            return response.up().withData("store", "not started").build();
        }
        DaemonStatus status = store.daemon().status();
        response.withData("mode", status.mode().name())
                .withData("highWaterMark", status.highWaterMark().mark())
                .withData("highWaterMarkHealthy", status.highWaterMark().healthy())
                .withData("heartbeatAgeMs", status.heartbeatAge().toMillis());
        if (status.highWaterMark().error() != null) {
            // a database outage is reported, not restarted: a new process could not read it either
            response.withData("highWaterMarkError", String.valueOf(status.highWaterMark().error().getMessage()));
        }
        for (ShardStatus shard : status.shards()) {
            response.withData(shard.name() + ".state", shard.state().name())
                    .withData(shard.name() + ".progression", shard.progression())
                    .withData(shard.name() + ".lag", shard.lag());
            if (shard.sinceLastCommit() != null) {
                response.withData(shard.name() + ".sinceLastCommitMs", shard.sinceLastCommit().toMillis());
            }
            if (shard.error() != null) {
                response.withData(shard.name() + ".error", String.valueOf(shard.error()));
            }
            if (shard.state() == ShardState.PAUSED) {
                response.withData("problem.paused." + shard.name(), "paused: " + shard.error());
            }
        }
        List<String> problems = status.livenessProblems();
        for (int i = 0; i < problems.size(); i++) {
            response.withData("problem." + (i + 1), problems.get(i));
        }
        return response.status(status.live()).build();
    }
}
