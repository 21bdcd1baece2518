package dev.ferret.cdi;

import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.metrics.OpenTelemetryMetrics;
import io.opentelemetry.api.OpenTelemetry;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.CDI;
import java.util.logging.Logger;

/**
 * The daemon's metrics in a container: through the {@link OpenTelemetry} bean MicroProfile Telemetry provides, when
 * the application sees its API (Open Liberty: {@code mpTelemetry-2.0} and the {@code third-party} API visibility;
 * WildFly: the {@code microprofile-telemetry} subsystem); nothing otherwise. Stateless.
 */
final class ContainerTelemetry {

    private static final Logger LOG = Logger.getLogger(ContainerTelemetry.class.getName());
    private static final String API = "io.opentelemetry.api.OpenTelemetry";

    private ContainerTelemetry() {
    }

    static DaemonMetrics metrics() {
        try {
            Class.forName(API, false, Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.info("The daemon reports no metrics: the application sees no OpenTelemetry API (enable MicroProfile"
                    + " Telemetry; on Open Liberty also the third-party API visibility)");
            return DaemonMetrics.NONE;
        }
        return Bean.metrics();
    }

    /** Loaded only once the API is known to be visible. */
    private static final class Bean {
        static DaemonMetrics metrics() {
            Instance<OpenTelemetry> openTelemetry = CDI.current().select(OpenTelemetry.class);
            if (!openTelemetry.isResolvable()) {
                LOG.info("The daemon reports no metrics: no OpenTelemetry bean (enable MicroProfile Telemetry)");
                return DaemonMetrics.NONE;
            }
            LOG.info("The daemon reports its metrics through MicroProfile Telemetry (meter "
                    + OpenTelemetryMetrics.METER + ")");
            return new OpenTelemetryMetrics(openTelemetry.get());
        }
    }
}
