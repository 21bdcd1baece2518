package dev.ferret.cdi.health;

import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DaemonStatus;
import java.util.List;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * UP once the store is built (schema applied or verified) and its daemon started, unless it is disabled. A paused
 * shard, a database outage or an outbox backlog keep it UP (the application still serves what it has) and are
 * listed as {@code problem.<n>}, with {@code healthy} false, for alerts.
 */
@Readiness
@ApplicationScoped
public class FerretReadinessCheck implements HealthCheck {

    @Inject
    FerretStoreLifecycle lifecycle;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("ferret-store");
        var store = lifecycle.storeIfStarted();
        if (store == null) {
            return response.down().withData("store", "not started").build();
        }
        DaemonStatus status = store.daemon().status();
        List<String> problems = status.problems();
        for (int i = 0; i < problems.size(); i++) {
            response.withData("problem." + (i + 1), problems.get(i));
        }
        return response.status(lifecycle.ready())
                .withData("healthy", status.healthy())
                .withData("store", "started")
                .withData("engine", store.engine().name())
                .withData("daemonMode", status.mode().name())
                .withData("daemonRunning", status.running())
                .withData("shards", status.shards().size())
                .build();
    }
}
