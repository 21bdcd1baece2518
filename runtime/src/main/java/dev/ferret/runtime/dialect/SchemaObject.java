package dev.ferret.runtime.dialect;

import java.util.List;
import java.util.function.BiFunction;

/**
 * A table, function or column Ferret owns, and the statements that create it (a table, then its indexes).
 *
 * @param name unqualified, lower-case name as it is looked up in the catalog: {@code table} or {@code table.column}
 * @param ddl  statements run in order when the object is missing
 */
public record SchemaObject(String name, List<String> ddl) {

    /** The prefix of an index's name as an object: {@code index:<name>}. */
    public static final String INDEX = "index:";

    public SchemaObject {
        ddl = List.copyOf(ddl);
    }

    /**
     * A column a later version added to a table: a new table is created with it, a table an earlier version created
     * gets it from {@code ddl} (which adds it, then whatever depends on it).
     */
    public static SchemaObject column(String table, String column, List<String> ddl) {
        return new SchemaObject(table + "." + column, ddl);
    }

    /**
     * The event metadata columns (correlation id, causation id, headers) for an events table an earlier version
     * created, each added by the statement {@code add} makes of (column, definition), the correlation index right
     * after its column.
     */
    public static List<SchemaObject> eventMetadataColumns(TableNames t, BiFunction<String, String, String> add,
                                                          String idDefinition, String headersDefinition,
                                                          String correlationIndex) {
        String events = t.local("events");
        return List.of(
                column(events, "correlation_id", List.of(add.apply("correlation_id", idDefinition), correlationIndex)),
                column(events, "causation_id", List.of(add.apply("causation_id", idDefinition))),
                column(events, "headers", List.of(add.apply("headers", headersDefinition))));
    }

    /** An index a document type declares, created by {@code ddl} (which adds any columns it needs first). */
    public static SchemaObject index(String indexName, List<String> ddl) {
        return new SchemaObject(INDEX + indexName, ddl);
    }

    /** Whether this is a column or an index of a table (checked after the tables were created). */
    public boolean isPartOfATable() {
        return name.indexOf('.') > 0 || name.startsWith(INDEX);
    }
}
