package dev.ferret.cdi.health;

import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardStatus;
import java.util.List;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;

/**
 * Reports every shard ({@code <shard>.state}, {@code .progression}, {@code .lag}, {@code .sinceLastCommitMs}, and
 * for a failed shard {@code .errorType}, the exception's class only), the high water mark and the detector's
 * heartbeat age. DOWN only for what a restart heals, each {@code problem.<n>} naming why: the detector has finished
 * no cycle within its bound, a HotCold lock round is overdue, or a shard that should run has committed nothing for
 * {@code ferret.daemon.stalled-shard-threshold}. A paused shard, a database outage or an outbox backlog stay UP (a new
 * process would meet them again) and are listed as {@code healthProblem.<n>} here and on the readiness check. No event
 * data, stream id or error message is published: error messages can carry them.
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
            response.withData("highWaterMarkErrorType", status.highWaterMark().error().getClass().getName());
        }
        for (ShardStatus shard : status.shards()) {
            response.withData(shard.name() + ".state", shard.state().name())
                    .withData(shard.name() + ".progression", shard.progression())
                    .withData(shard.name() + ".lag", shard.lag());
            if (shard.sinceLastCommit() != null) {
                response.withData(shard.name() + ".sinceLastCommitMs", shard.sinceLastCommit().toMillis());
            }
            if (shard.error() != null) {
                response.withData(shard.name() + ".errorType", shard.error().getClass().getName());
            }
        }
        List<String> problems = status.livenessProblems();
        for (int i = 0; i < problems.size(); i++) {
            response.withData("problem." + (i + 1), problems.get(i));
        }
        List<String> healthProblems = status.problems();
        for (int i = 0; i < healthProblems.size(); i++) {
            response.withData("healthProblem." + (i + 1), healthProblems.get(i));
        }
        return response.status(status.live()).build();
    }
}
