package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the runtime's public surface to what another package or module needs: every public top-level type of the
 * compiled main classes is listed here, so a type that becomes public (or stops being) shows in review with the
 * reason beside it. Java has no friend packages: a type one runtime package shares with another must be public,
 * and the list is where that cost is counted. Users call {@code Ferret} and the {@code api} module's types only.
 * Runs without a database.
 */
class PublicTypesTest {

    /** Each needed by another runtime package, by the container extension, the benchmarks or the tests. */
    private static final List<String> PUBLIC = List.of(
            "dev.ferret.runtime.Ferret",
            "dev.ferret.runtime.FerretDocumentStore",
            "dev.ferret.runtime.JsonbSerializer",
            "dev.ferret.runtime.RuntimeStoreFactory",
            "dev.ferret.runtime.StoreSeams",
            "dev.ferret.runtime.context.StoreContext",
            "dev.ferret.runtime.context.TenantDatabases",
            "dev.ferret.runtime.context.TimeSource",
            "dev.ferret.runtime.context.TransactionRunner",
            "dev.ferret.runtime.daemon.AsyncDaemon",
            "dev.ferret.runtime.daemon.DaemonExecutors",
            "dev.ferret.runtime.daemon.ReadSwitches",
            "dev.ferret.runtime.daemon.ShardNames",
            "dev.ferret.runtime.daemon.StoreSessions",
            "dev.ferret.runtime.daemon.hwm.HighWaterMarkDetector",
            "dev.ferret.runtime.daemon.hwm.TenantMarks",
            "dev.ferret.runtime.dialect.AdvisoryLockKeys",
            "dev.ferret.runtime.dialect.AppendedRange",
            "dev.ferret.runtime.dialect.ArchiveSql",
            "dev.ferret.runtime.dialect.ArrayColumn",
            "dev.ferret.runtime.dialect.BulkCopy",
            "dev.ferret.runtime.dialect.CommitSignals",
            "dev.ferret.runtime.dialect.CopyRows",
            "dev.ferret.runtime.dialect.DaemonSql",
            "dev.ferret.runtime.dialect.DeadLetterSql",
            "dev.ferret.runtime.dialect.Dialect",
            "dev.ferret.runtime.dialect.DocumentIndexSql",
            "dev.ferret.runtime.dialect.DocumentSql",
            "dev.ferret.runtime.dialect.EventSql",
            "dev.ferret.runtime.dialect.IndexKeyLimit",
            "dev.ferret.runtime.dialect.OutboxSql",
            "dev.ferret.runtime.dialect.PortableSql",
            "dev.ferret.runtime.dialect.ReplicaSql",
            "dev.ferret.runtime.dialect.SchemaObject",
            "dev.ferret.runtime.dialect.SchemaSql",
            "dev.ferret.runtime.dialect.SequenceOwnership",
            "dev.ferret.runtime.dialect.SequencesPassedException",
            "dev.ferret.runtime.dialect.ShardLockSession",
            "dev.ferret.runtime.dialect.TableNames",
            "dev.ferret.runtime.dialect.ValueKind",
            "dev.ferret.runtime.dialect.h2.H2Dialect",
            "dev.ferret.runtime.dialect.h2.H2JsonFunctions",
            "dev.ferret.runtime.dialect.postgresql.PostgresDialect",
            "dev.ferret.runtime.dialect.sqlserver.SqlServerDialect",
            "dev.ferret.runtime.documents.DocumentChanges",
            "dev.ferret.runtime.documents.DocumentMapping",
            "dev.ferret.runtime.documents.DocumentMappings",
            "dev.ferret.runtime.documents.ShadowTable",
            "dev.ferret.runtime.engines.Dialects",
            "dev.ferret.runtime.events.EventRows",
            "dev.ferret.runtime.events.EventTypes",
            "dev.ferret.runtime.events.StoredEvent",
            "dev.ferret.runtime.events.StreamAppends",
            "dev.ferret.runtime.events.StreamArchives",
            "dev.ferret.runtime.metrics.DaemonMetrics",
            "dev.ferret.runtime.metrics.OpenTelemetryMetrics",
            "dev.ferret.runtime.metrics.ReadRoute",
            "dev.ferret.runtime.metrics.ShardLabel",
            "dev.ferret.runtime.progression.ProgressionRows",
            "dev.ferret.runtime.projections.PageBatch",
            "dev.ferret.runtime.projections.ProjectionApplier",
            "dev.ferret.runtime.projections.ShardDocumentCache",
            "dev.ferret.runtime.projections.SnapshotCache",
            "dev.ferret.runtime.projections.StreamAggregates",
            "dev.ferret.runtime.query.EditDistance",
            "dev.ferret.runtime.query.PropertyPath",
            "dev.ferret.runtime.query.PropertyTypes",
            "dev.ferret.runtime.query.QuerySql",
            "dev.ferret.runtime.retry.Backoff",
            "dev.ferret.runtime.retry.TransientRetry"
    );

    @Test
    void everyPublicTypeOfTheRuntimeIsOneThisListNames() throws Exception {
        Set<String> found = publicTopLevelTypes(mainClasses());
        assertThat(found).as("public top-level types of the runtime (make a new one package-private, or add it"
                + " here with the package or module that needs it)").containsExactlyInAnyOrderElementsOf(PUBLIC);
    }

    private static Path mainClasses() throws URISyntaxException {
        return Path.of(FerretDocumentStore.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static Set<String> publicTopLevelTypes(Path root) throws IOException, ClassNotFoundException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String relative = root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".");
                String name = relative.substring(0, relative.length() - ".class".length());
                if (name.contains("$") || name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, PublicTypesTest.class.getClassLoader());
                if (Modifier.isPublic(type.getModifiers())) {
                    names.add(name);
                }
            }
        }
        assertThat(names).as("compiled classes under %s", root).contains(Ferret.class.getName());
        return names;
    }
}
