package dev.ferret.runtime.dialect;

import dev.ferret.DatabaseEngine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One database engine's SQL. Every statement Ferret issues comes from a dialect, rendered once at startup into the
 * {@code *Sql} records; nothing above this package builds SQL. Implementations are stateless and thread-safe.
 */
public interface Dialect {

    DatabaseEngine engine();

    /** The schema used when none is configured. */
    String defaultSchema();

    SchemaSql schemaSql(TableNames names);

    /** The table of one document type, with its indexes. */
    SchemaObject documentTable(TableNames names, String documentName);

    EventSql eventSql(TableNames names);

    DocumentSql documentSql(TableNames names, String documentName);

    /**
     * The filter fragment {@code <top-level JSON property text> = ?} with two parameters: the
     * {@link #propertyArgument property argument} and the value's text.
     */
    String propertyEquals(TableNames names);

    /** What is bound for a property in {@link #propertyEquals(TableNames)}: the bare name, or a JSON path. */
    default String propertyArgument(String property) {
        return property;
    }

    /** Binds a list of document ids to the single id-list parameter of {@link DocumentSql#loadMany()}. */
    void bindIds(Connection connection, PreparedStatement statement, int index, List<String> ids)
            throws SQLException;

    /** Binds an event id; engines without a JDBC UUID mapping take its text. */
    default void bindUuid(PreparedStatement statement, int index, java.util.UUID id) throws SQLException {
        statement.setObject(index, id);
    }

    /** Whether {@code e} reports a primary-key or unique-constraint violation. */
    boolean isUniqueViolation(SQLException e);

    /**
     * Takes the migration lock on {@code connection}, whose transaction is open; it is released when that
     * transaction ends (or when the returned handle closes, for engines without transaction-scoped locks).
     */
    MigrationLock lockForMigration(Connection connection, String schema, Duration timeout) throws SQLException;

    /** How identifiers are stored in the catalog: unquoted names fold to this case. */
    default String catalogCase(String identifier) {
        return identifier.toLowerCase(Locale.ROOT);
    }

    /** Whether {@code schema} exists. */
    default boolean schemaExists(Connection connection, String schema) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT 1 FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Lower-cased names of the tables (and functions, where the dialect creates any) in {@code schema}. */
    default Set<String> existingObjects(Connection connection, String schema) throws SQLException {
        Set<String> names = new HashSet<>();
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ?")) {
            ps.setString(1, catalogCase(schema));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        return names;
    }

    /** A held migration lock. */
    interface MigrationLock extends AutoCloseable {

        MigrationLock TRANSACTION_SCOPED = () -> { };

        @Override
        void close();
    }
}
