package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * The statements that create the store's schema.
 *
 * @param createSchema  creates the database schema when it is missing
 * @param migrationLock   taken before the migration to serialize nodes migrating at once; empty when the engine
 *                        has no statement for it
 * @param migrationUnlock releases the migration lock; empty when it ends with the transaction
 * @param objects       the event store's tables (and, on H2, functions), created when missing
 */
public record SchemaSql(String createSchema, String migrationLock, String migrationUnlock, List<SchemaObject> objects) {

    public SchemaSql {
        objects = List.copyOf(objects);
    }
}
