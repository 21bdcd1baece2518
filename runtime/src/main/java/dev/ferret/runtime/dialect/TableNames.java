package dev.ferret.runtime.dialect;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;

/**
 * The validated schema and prefix every table name is built from. Both parts are checked against a strict
 * identifier pattern, so the names below are safe to place in SQL text.
 */
public record TableNames(String schema, String prefix) {

    /** PostgreSQL's identifier limit; the strictest of the three engines. */
    private static final int MAX_NAME_LENGTH = 63;

    public TableNames {
        StoreOptions.requireIdentifier("schema", schema);
        StoreOptions.requireIdentifier("tablePrefix", prefix);
    }

    public String events() {
        return qualified("events");
    }

    public String streams() {
        return qualified("streams");
    }

    /** The events of archived streams, moved out of {@link #events()} with their sequence numbers. */
    public String eventsArchive() {
        return qualified("events_archive");
    }

    public String deadLetters() {
        return qualified("dead_letters");
    }

    /** One row per tenant: the last number of its event sequence, when events are partitioned by tenant. */
    public String tenantSequences() {
        return qualified("tenant_sequences");
    }

    /** Side-effect messages of committed pages, until delivered and past their retention. */
    public String outbox() {
        return qualified("outbox");
    }

    public String progression() {
        return qualified("event_progression");
    }

    /** Unqualified name of a document table. */
    public String documentTableName(String documentName) {
        String table = prefix + "doc_" + documentName;
        if (table.length() > MAX_NAME_LENGTH - 3) {
            // leave room for the pk_ constraint built from the table name
            throw new ConfigurationException("document table name '" + table + "' is longer than "
                    + (MAX_NAME_LENGTH - 3) + " characters; shorten the tablePrefix or the document name");
        }
        return table;
    }

    public String document(String documentName) {
        return schema + "." + documentTableName(documentName);
    }

    /** A constraint name, {@code <kind>_<prefix><local>}: unique per schema, as PostgreSQL and SQL Server need. */
    public String constraint(String kind, String local) {
        return kind + "_" + prefix + local;
    }

    /** {@code local} with the prefix, unqualified: the name of a table or function in the catalog. */
    public String local(String local) {
        return prefix + local;
    }

    private String qualified(String local) {
        return schema + "." + prefix + local;
    }
}
