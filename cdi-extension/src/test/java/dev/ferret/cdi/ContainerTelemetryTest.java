package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.runtime.metrics.DaemonMetrics;
import org.junit.jupiter.api.Test;

class ContainerTelemetryTest {

    @Test
    void anApplicationThatSeesNoOpenTelemetryApiGetsNoMetricsAndNoError() {
        Thread thread = Thread.currentThread();
        ClassLoader original = thread.getContextClassLoader();
        // the platform's loader alone: no io.opentelemetry, as in a container without MicroProfile Telemetry
        thread.setContextClassLoader(ClassLoader.getPlatformClassLoader());
        try {
            assertThat(ContainerTelemetry.metrics()).isSameAs(DaemonMetrics.NONE);
        } finally {
            thread.setContextClassLoader(original);
        }
    }
}
