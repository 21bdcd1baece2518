package dev.ferret.runtime;

import dev.ferret.DatabaseEngine;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentMappings;
import dev.ferret.runtime.engines.Dialects;
import java.util.ArrayList;
import java.util.List;

/**
 * Every statement schema apply runs on an empty database, in order, without a connection: what a DBA reviews before a
 * store with {@code applyAllDatabaseChangesOnStartup(false)} verifies a schema someone else created. A database an
 * earlier release made also gets the columns added since; those statements run only there and are not listed.
 */
final class SchemaScript {

    private SchemaScript() {
    }

    static List<String> statements(StoreOptions options, DatabaseEngine engine) {
        Dialect dialect = Dialects.of(engine, options.events().getAppendLockTimeout());
        TableNames names = StoreAssembly.names(options, dialect);
        SchemaSql schemaSql = dialect.schemaSql(names);
        List<String> statements = new ArrayList<>();
        statements.add(schemaSql.createSchema());
        List<SchemaObject> wanted = StoreAssembly.wantedObjects(schemaSql, DocumentMappings.of(options, dialect, names));
        // tables first, then what is part of one (an index), as the migrator runs them; a column an earlier
        // release lacked is already in a new table
        for (SchemaObject object : wanted) {
            if (!object.isPartOfATable()) {
                statements.addAll(object.ddl());
            }
        }
        for (SchemaObject object : wanted) {
            if (object.name().startsWith(SchemaObject.INDEX)) {
                statements.addAll(object.ddl());
            }
        }
        return statements;
    }

    /** The statements as one script: each ends with {@code GO} on SQL Server (a batch each), else with {@code ;}. */
    static String render(List<String> statements, DatabaseEngine engine) {
        StringBuilder script = new StringBuilder();
        for (String statement : statements) {
            String trimmed = statement.strip();
            script.append(trimmed);
            if (engine == DatabaseEngine.SQL_SERVER) {
                script.append("\nGO\n\n");
            } else {
                script.append(trimmed.endsWith(";") ? "\n\n" : ";\n\n");
            }
        }
        return script.toString();
    }
}
