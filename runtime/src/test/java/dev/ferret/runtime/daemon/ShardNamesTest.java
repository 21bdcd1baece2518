package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.ConfigurationException;
import dev.ferret.DatabaseEngine;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.projections.Snapshot;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.dialect.TableNames;
import org.junit.jupiter.api.Test;

/**
 * HotCold lock names against each engine's limit, checked from the options alone: SQL Server, which cuts an
 * {@code sp_getapplock} resource past 255 characters, cannot run here. Runs without a database.
 */
class ShardNamesTest {

    private static final TableNames NAMES = new TableNames("dbo", "pc_");

    /** 140 + ":All@" + 100 = 245 characters: fits the progression column; its lock name is 21 more. */
    private static ProjectionOptions projectionOf140Characters() {
        ProjectionOptions projections = new ProjectionOptions();
        projections.add(Snapshot.of("P" + "x".repeat(139), Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n())), Lifecycle.ASYNC);
        return projections;
    }

    @Test
    void aShardWhoseLockNamePassesSqlServersApplockLimitIsRefusedUnderHotCold() {
        assertThatThrownBy(() -> ShardNames.check(projectionOf140Characters(), true, DaemonMode.HOT_COLD,
                Dialects.of(DatabaseEngine.SQL_SERVER), NAMES))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("projection Snapshot[P")
                .hasMessageContaining("lock name 'ferret:shard:dbo.pc_:P")
                .hasMessageContaining("266 characters long")
                .hasMessageContaining("limit of 255 that SQL_SERVER keeps")
                .hasMessageContaining("a name of at most 129 characters");
    }

    @Test
    void theSameShardIsAcceptedWhereNoLockIsTakenOrTheLockNameIsKeptWhole() {
        assertThatCode(() -> ShardNames.check(projectionOf140Characters(), true, DaemonMode.SOLO,
                Dialects.of(DatabaseEngine.SQL_SERVER), NAMES)).doesNotThrowAnyException();
        assertThatCode(() -> ShardNames.check(projectionOf140Characters(), true, DaemonMode.HOT_COLD,
                Dialects.of(DatabaseEngine.POSTGRESQL), NAMES)).doesNotThrowAnyException();
        assertThatCode(() -> ShardNames.check(projectionOf140Characters(), true, DaemonMode.HOT_COLD,
                Dialects.of(DatabaseEngine.H2), NAMES)).doesNotThrowAnyException();
    }

    @Test
    void withoutTenantPartitioningEveryValidNameFitsAtAnyVersion() {
        ProjectionOptions projections = new ProjectionOptions();
        projections.add(Snapshot.of("P" + "x".repeat(199), Tally.class)
                .create(Tick.class, (id, e) -> new Tally(id, 1, e.n())).withVersion(Integer.MAX_VALUE),
                Lifecycle.ASYNC);
        assertThatCode(() -> ShardNames.check(projections, false, DaemonMode.SOLO,
                Dialects.of(DatabaseEngine.POSTGRESQL), NAMES)).doesNotThrowAnyException();
    }
}
