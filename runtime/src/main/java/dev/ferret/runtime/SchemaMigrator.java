package dev.ferret.runtime;

import dev.ferret.SchemaException;
import dev.ferret.runtime.dialect.Dialect.MigrationLock;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.SchemaObject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a schema up to what the store needs. Creating compares the catalog with the wanted objects under the
 * migration lock and runs DDL only for what is missing, so a second start issues no DDL and nodes starting at once
 * serialize behind the first one.
 */
final class SchemaMigrator {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String schema;
    private final String createSchema;
    private final List<SchemaObject> wanted;
    private final Duration lockTimeout;

    public SchemaMigrator(DataSource dataSource, Dialect dialect, String schema, String createSchema,
                          List<SchemaObject> wanted, Duration lockTimeout) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.schema = schema;
        this.createSchema = createSchema;
        this.wanted = List.copyOf(wanted);
        this.lockTimeout = lockTimeout;
    }

    /** Creates whatever is missing and returns the names of what it created (empty when nothing was). */
    public List<String> apply() {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try (MigrationLock ignored = dialect.lockForMigration(connection, schema, lockTimeout)) {
                List<String> created = createMissing(connection);
                connection.commit();
                if (!created.isEmpty()) {
                    LOG.info("Created {} in schema {}", created, schema);
                }
                return created;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new SchemaException("could not apply the schema '" + schema + "': " + e.getMessage(), e);
        }
    }

    /**
     * Checks that everything exists.
     *
     * @throws SchemaException listing what is missing
     */
    public void verify() {
        try (Connection connection = dataSource.getConnection()) {
            List<String> missing = missing(connection);
            if (!missing.isEmpty()) {
                throw new SchemaException("schema '" + schema + "' is missing " + missing
                        + "; create them or set applyAllDatabaseChangesOnStartup");
            }
        } catch (SQLException e) {
            throw new SchemaException("could not read the catalog of schema '" + schema + "': " + e.getMessage(), e);
        }
    }

    private List<String> missing(Connection connection) throws SQLException {
        List<String> missing = new ArrayList<>();
        if (!dialect.schemaExists(connection, schema)) {
            missing.add("schema " + schema);
            wanted.forEach(object -> missing.add(object.name()));
            return missing;
        }
        Set<String> existing = dialect.existingObjects(connection, schema);
        for (SchemaObject object : wanted) {
            if (!existing.contains(object.name().toLowerCase(Locale.ROOT))) {
                missing.add(object.name());
            }
        }
        return missing;
    }

    private List<String> createMissing(Connection connection) throws SQLException {
        List<String> created = new ArrayList<>();
        try (Statement statement = connection.createStatement()) {
            if (!dialect.schemaExists(connection, schema)) {
                statement.execute(createSchema);
                created.add("schema " + schema);
            }
            Set<String> existing = dialect.existingObjects(connection, schema);
            boolean columnsRead = false;
            for (SchemaObject object : wanted) {
                if (object.isPartOfATable() && !columnsRead) {
                    // a table created just now has every column already: only older tables need them added
                    existing = dialect.existingObjects(connection, schema);
                    columnsRead = true;
                }
                if (!existing.contains(object.name().toLowerCase(Locale.ROOT))) {
                    for (String ddl : object.ddl()) {
                        statement.execute(ddl);
                    }
                    created.add(object.name());
                }
            }
        }
        return created;
    }
}
