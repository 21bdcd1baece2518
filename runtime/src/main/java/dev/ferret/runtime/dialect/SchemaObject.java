package dev.ferret.runtime.dialect;

import java.util.List;

/**
 * A table or function Ferret owns, and the statements that create it (the table, then its indexes).
 *
 * @param name unqualified, lower-case name as it is looked up in the catalog
 * @param ddl  statements run in order when the object is missing
 */
public record SchemaObject(String name, List<String> ddl) {

    public SchemaObject {
        ddl = List.copyOf(ddl);
    }
}
