package dev.ferret.cdi.health;

import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;

/**
 * Reports every shard ({@code <shard>.state}, {@code .progression}, {@code .lag}, {@code .error}) and the high water
 * mark; DOWN while a shard is paused on an error (it needs {@code daemon().restart(shard)} or a fix and a redeploy).
 * A shard retrying a lost database stays UP here: it heals by itself.
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
        boolean paused = false;
        response.withData("mode", status.mode().name())
                .withData("highWaterMark", status.highWaterMark().mark())
                .withData("highWaterMarkHealthy", status.highWaterMark().healthy());
        for (ShardStatus shard : status.shards()) {
            response.withData(shard.name() + ".state", shard.state().name())
                    .withData(shard.name() + ".progression", shard.progression())
                    .withData(shard.name() + ".lag", shard.lag());
            if (shard.error() != null) {
                response.withData(shard.name() + ".error", String.valueOf(shard.error()));
            }
            paused |= shard.state() == ShardState.PAUSED;
        }
        return response.status(!paused).build();
    }
}
