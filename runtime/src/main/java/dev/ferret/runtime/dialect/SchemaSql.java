package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * The statements that create the store's schema.
 *
 * @param createSchema  creates the database schema when it is missing
 * @param migrationLock taken inside the migration transaction to serialize nodes migrating at once
 * @param objects       the event store's tables (and, on H2, functions), created when missing
 */
public record SchemaSql(String createSchema, String migrationLock, List<SchemaObject> objects) {

    public SchemaSql {
        objects = List.copyOf(objects);
    }
}
