package dev.ferret.runtime.daemon;

import static dev.ferret.runtime.daemon.DaemonFixtures.appendTicks;
import static dev.ferret.runtime.daemon.DaemonFixtures.fastDaemon;
import static dev.ferret.runtime.daemon.DaemonFixtures.tallySnapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonMode;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.daemon.ShardState;
import dev.ferret.projections.Lifecycle;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.JsonbSerializer;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import dev.ferret.runtime.dialect.DaemonSql;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentMappings;
import dev.ferret.runtime.engines.Dialects;
import dev.ferret.runtime.events.EventTypes;
import dev.ferret.runtime.metrics.DaemonMetrics;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ProjectionApplier;
import dev.ferret.runtime.projections.SnapshotCache;
import dev.ferret.runtime.retry.TransientRetry;
import dev.ferret.runtime.testing.TestDatabase;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A shard agent built from its parts alone, with no daemon and no store object: the parts are what a test needs to
 * hand it. Runs on the conformance database (embedded H2 unless a profile picks a server).
 */
@Tag("conformance")
class ShardAgentPartsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Neither raised events nor after-commit listeners take part here. */
    private static final StoreSessions NO_SESSIONS = new StoreSessions() {
        @Override
        public void appendWithin(Connection c, List<PageBatch.RaisedEvent> raised, OffsetDateTime now,
                                 List<Runnable> afterTransaction) {
            throw new UnsupportedOperationException("this projection raises no events");
        }

        @Override
        public QuerySession querySession(String tenantId) {
            throw new UnsupportedOperationException("this shard has no listeners");
        }
    };

    @Test
    void anAgentBuiltFromItsPartsCatchesUpWithTheMarkAndCommitsItsProgression() throws Exception {
        try (TestDatabase db = TestDatabase.create("agentparts")) {
            StoreOptions options = fastDaemon(db);
            options.daemon().mode(DaemonMode.DISABLED);
            options.projections().add(tallySnapshot(), Lifecycle.ASYNC);
            try (DocumentStore writer = Ferret.createStore(options)) {
                appendTicks(writer, "t", 3);

                Dialect dialect = Dialects.of(db.engine());
                TableNames names = new TableNames(db.schema(), options.getTablePrefix());
                StoreContext context = new StoreContext(db.dataSource(), dialect, names, dialect.eventSql(names),
                        DocumentMappings.of(options, dialect, names), new EventTypes(options.events().byAlias()),
                        new JsonbSerializer(), TransactionRunner.JDBC, Clock.systemUTC(),
                        new TenantDatabases(db.dataSource(), options.tenancy(), false), false, null);
                DaemonSettings settings = options.daemon();
                DaemonSql sql = dialect.daemonSql(names);
                DaemonExecutors executors = DaemonExecutors.create("parts", 1);
                LogMarks marks = new LogMarks(context, settings, sql);
                DatabaseLimits limits = new DatabaseLimits(context.databases(), settings, TimeSource.SYSTEM);
                ShardParts parts = new ShardParts(context, settings, sql, dialect.outboxSql(names),
                        dialect.deadLetterSql(names),
                        new ProgressionRows(dialect, sql), executors,
                        new LoadBudget(settings.getTenantLoadBudget(), settings.getTenantLoadMemoryThreshold()),
                        limits,
                        new ProgressBoard(TimeSource.SYSTEM), List.of(), TransientRetry.RESILIENCE4J, NO_SESSIONS,
                        marks, TimeSource.SYSTEM, () -> { }, DaemonMetrics.NONE, new Outboxes(),
                        new SnapshotCache(1 << 20), new ShardGroups(),
                        new ProgressionAtStart(), SharedLoads.of(0, 1),
                        SharedWrites.of(TransactionRunner.JDBC, limits, false, false, 1), ReadSwitches.NONE);
                LogPartition whole = new LogPartition(null, context.databases().main());
                ShardAgent agent = new ShardAgent("Tally:All", ProjectionApplier.of(tallySnapshot(), context), whole,
                        parts);
                try {
                    marks.detector().detect();
                    long mark = marks.markOf(whole);

                    agent.start();
                    await().atMost(WAIT).until(() -> agent.floor() == mark);

                    assertThat(agent.state()).isEqualTo(ShardState.RUNNING);
                    assertThat(parts.progression().read(db.dataSource(), "Tally:All")).isEqualTo(mark);
                    assertThat(writer.querySession().load(Tally.class, "t")).map(Tally::count).hasValue(3L);
                } finally {
                    agent.stop(WAIT);
                    executors.scheduler().shutdownNow();
                    executors.workers().shutdownNow();
                }
            }
        }
    }
}
