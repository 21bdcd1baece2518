package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.retry.TransientRetry;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The seam's contract outside a container (no interceptor, so one attempt): a transient failure travels through
 * {@code @Retry} wrapped and comes back to the runtime as itself; anything else passes straight through.
 */
class FaultToleranceRetriesTest {

    private final TransientRetry retry = new FaultToleranceRetries().factory()
            .create("Orders:All", new DaemonSettings(), e -> e instanceof SQLTransientConnectionException);

    @Test
    void aTransientFailureComesBackUnwrappedOnceRetriesAreSpent() {
        AtomicInteger attempts = new AtomicInteger();
        SQLTransientConnectionException outage = new SQLTransientConnectionException("down", "08001");
        assertThatThrownBy(() -> retry.call(() -> {
            attempts.incrementAndGet();
            throw outage;
        })).isSameAs(outage);
        assertThat(attempts).hasValue(1);
    }

    @Test
    void otherFailuresAndResultsPassThrough() throws Exception {
        SQLException syntax = new SQLException("syntax", "42000");
        assertThatThrownBy(() -> retry.call(() -> {
            throw syntax;
        })).isSameAs(syntax);
        assertThat(retry.call(() -> 42)).isEqualTo(42);
    }
}
