package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import java.time.Duration;
import java.util.function.Predicate;

/** A detection run now on the scheduler thread, for a caller that must not pass on a mark it has not read. */
interface MarkRefresh {

    /** Detects the {@code databases} selected and returns the store's mark; a transient failure is retried. */
    long refreshMark(Duration timeout, Predicate<TenantDatabases.Database> databases);

    /**
     * As {@link #refreshMark}, and returns the highest committed sequence: what a reader who just appended expects to
     * see, even while the mark still waits at a hole below it.
     */
    long refreshHighest(Duration timeout, Predicate<TenantDatabases.Database> databases);
}
