package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.DeadLetterSql;
import dev.ferret.runtime.dialect.OutboxSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.SchemaSql;
import dev.ferret.runtime.dialect.TableNames;
import java.util.ArrayList;
import java.util.List;

/** SQL Server's DDL for Ferret's own tables: idempotent statements, one table each, golden-tested. */
final class SqlServerSchema {

    private SqlServerSchema() {
    }

    /** Every table Ferret owns (documents' aside), and the columns an earlier version lacked. */
    static SchemaSql of(TableNames t) {
        SchemaObject events = new SchemaObject(t.local("events"), List.of(
                "IF OBJECT_ID(N'" + t.events() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.events() + " (\n"
                        + "  seq_id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT " + t.constraint("pk", "events")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + eventColumns(t, "events")
                        + "  CONSTRAINT " + t.constraint("uq", "events_stream_version")
                        + " UNIQUE (tenant_id, stream_id, version)\n"
                        + ")",
                // filtered: SQL Server counts NULLs as equal in a unique index, and unpartitioned events have none
                "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + t.constraint("ux", "events_tenant_seq")
                        + "' AND object_id = OBJECT_ID(N'" + t.events() + "'))\n"
                        + "CREATE UNIQUE INDEX " + t.constraint("ux", "events_tenant_seq") + " ON " + t.events()
                        + " (tenant_id, tenant_seq) WHERE tenant_seq IS NOT NULL",
                correlationIndex(t)));
        SchemaObject tenantSequences = new SchemaObject(t.local("tenant_sequences"), List.of(
                "IF OBJECT_ID(N'" + t.tenantSequences() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.tenantSequences() + " (\n"
                        + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL CONSTRAINT " + t.constraint("pk", "tenant_sequences")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  last_seq BIGINT NOT NULL,\n"
                        + "  last_updated DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        SchemaObject streams = new SchemaObject(t.local("streams"), List.of(
                "IF OBJECT_ID(N'" + t.streams() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.streams() + " (\n"
                        + "  id " + SqlServerDialect.ID_COLUMN + " NOT NULL,\n"
                        + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL,\n"
                        + "  type NVARCHAR(250) NULL,\n"
                        + "  version BIGINT NOT NULL,\n"
                        + "  timestamp DATETIMEOFFSET NOT NULL,\n"
                        + "  created DATETIMEOFFSET NOT NULL,\n"
                        + "  archived BIT NOT NULL CONSTRAINT " + t.constraint("df", "streams_archived") + " DEFAULT 0,\n"
                        + "  CONSTRAINT " + t.constraint("pk", "streams") + " PRIMARY KEY CLUSTERED (tenant_id, id)\n"
                        + ")"));
        SchemaObject progression = new SchemaObject(t.local("event_progression"), List.of(
                "IF OBJECT_ID(N'" + t.progression() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.progression() + " (\n"
                        + "  name " + SqlServerDialect.SHARD_NAME_COLUMN + " NOT NULL CONSTRAINT " + t.constraint("pk", "event_progression")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  last_seq_id BIGINT NOT NULL,\n"
                        + "  last_updated DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        SchemaObject deadLetters = new SchemaObject(t.local("dead_letters"), List.of(
                "IF OBJECT_ID(N'" + t.deadLetters() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.deadLetters() + " (\n"
                        + "  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT " + t.constraint("pk", "dead_letters")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  projection " + SqlServerDialect.SHARD_NAME_COLUMN + " NOT NULL,\n"
                        + "  seq_id BIGINT NOT NULL,\n"
                        + "  event_id UNIQUEIDENTIFIER NULL,\n"
                        + "  type NVARCHAR(250) NOT NULL,\n"
                        + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL,\n"
                        + "  exception_type NVARCHAR(500) NOT NULL,\n"
                        + "  message NVARCHAR(MAX) NULL,\n"
                        + "  timestamp DATETIMEOFFSET NOT NULL\n"
                        + ")"));
        SchemaObject outbox = new SchemaObject(t.local("outbox"), List.of(
                "IF OBJECT_ID(N'" + t.outbox() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.outbox() + " (\n"
                        + "  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT " + t.constraint("pk", "outbox")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + "  message_id UNIQUEIDENTIFIER NOT NULL,\n"
                        + "  shard " + SqlServerDialect.SHARD_NAME_COLUMN + " NOT NULL,\n"
                        + "  seq_id BIGINT NOT NULL,\n"
                        + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL,\n"
                        + "  type NVARCHAR(500) NOT NULL,\n"
                        + "  payload NVARCHAR(MAX) NOT NULL,\n"
                        + "  created DATETIMEOFFSET NOT NULL,\n"
                        + "  delivered_at DATETIMEOFFSET NULL,\n"
                        + "  attempts INT NOT NULL,\n"
                        + "  last_error NVARCHAR(MAX) NULL\n"
                        + ")",
                "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + t.constraint("ix", "outbox_pending")
                        + "' AND object_id = OBJECT_ID(N'" + t.outbox() + "'))\n"
                        + "CREATE INDEX " + t.constraint("ix", "outbox_pending") + " ON " + t.outbox()
                        + " (shard, delivered_at, id)"));
        // CREATE SCHEMA must be alone in its batch, hence EXEC
        List<SchemaObject> objects = new ArrayList<>(List.of(events, streams, tenantSequences, progression,
                deadLetters, outbox, DeadLetterSql.shardIndex(t, "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'"
                        + t.constraint("ix", "dead_letters_shard") + "' AND object_id = OBJECT_ID(N'" + t.deadLetters()
                        + "'))\n" + "CREATE INDEX " + t.constraint("ix", "dead_letters_shard") + " ON " + t.deadLetters()
                        + " (projection, id)"),
                OutboxSql.undeliveredIndex(t, "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'"
                        + t.constraint("ix", "outbox_undelivered") + "' AND object_id = OBJECT_ID(N'" + t.outbox()
                        + "'))\nCREATE INDEX ")));
        objects.addAll(SchemaObject.eventMetadataColumns(t, (column, definition) -> addEventColumn(t, column,
                definition), SqlServerDialect.ID_COLUMN + " NULL", "NVARCHAR(MAX) NULL CONSTRAINT " + t.constraint("ck", "events_headers")
                + " CHECK (ISJSON(headers) = 1)", correlationIndex(t)));
        objects.add(SchemaObject.column(t.local("streams"), "archived", List.of(
                "IF COL_LENGTH(N'" + t.streams() + "', N'archived') IS NULL\n"
                        + "ALTER TABLE " + t.streams() + " ADD archived BIT NOT NULL CONSTRAINT "
                        + t.constraint("df", "streams_archived") + " DEFAULT 0")));
        objects.add(new SchemaObject(t.local("events_archive"), List.of(
                "IF OBJECT_ID(N'" + t.eventsArchive() + "', N'U') IS NULL\n"
                        + "CREATE TABLE " + t.eventsArchive() + " (\n"
                        + "  seq_id BIGINT NOT NULL CONSTRAINT " + t.constraint("pk", "events_archive")
                        + " PRIMARY KEY CLUSTERED,\n"
                        + eventColumns(t, "events_archive")
                        + "  CONSTRAINT " + t.constraint("uq", "events_archive_stream")
                        + " UNIQUE (tenant_id, stream_id, version)\n"
                        + ")")));
        return new SchemaSql("IF SCHEMA_ID(N'" + t.schema() + "') IS NULL EXEC(N'CREATE SCHEMA " + t.schema() + "')",
                SqlServerDialect.MIGRATION_LOCK, SqlServerDialect.MIGRATION_UNLOCK,
                objects);
    }

    /**
     * An event's columns after its sequence number, in the live table and the archive alike; the JSON checks are
     * named after {@code table}.
     */
    private static String eventColumns(TableNames t, String table) {
        return "  id UNIQUEIDENTIFIER NOT NULL,\n"
                + "  stream_id " + SqlServerDialect.ID_COLUMN + " NOT NULL,\n"
                + "  version BIGINT NOT NULL,\n"
                + "  type NVARCHAR(250) NOT NULL,\n"
                + "  data NVARCHAR(MAX) NOT NULL CONSTRAINT " + t.constraint("ck", table + "_data")
                + " CHECK (ISJSON(data) = 1),\n"
                + "  timestamp DATETIMEOFFSET NOT NULL,\n"
                + "  tenant_id " + SqlServerDialect.TENANT_COLUMN + " NOT NULL,\n"
                + "  tenant_seq BIGINT NULL,\n"
                + "  correlation_id " + SqlServerDialect.ID_COLUMN + " NULL,\n"
                + "  causation_id " + SqlServerDialect.ID_COLUMN + " NULL,\n"
                + "  headers NVARCHAR(MAX) NULL CONSTRAINT " + t.constraint("ck", table + "_headers")
                + " CHECK (ISJSON(headers) = 1),\n";
    }

    /** Adds a column to a table an earlier version created; {@code COL_LENGTH} is null while it is missing. */
    private static String addEventColumn(TableNames t, String column, String definition) {
        return "IF COL_LENGTH(N'" + t.events() + "', N'" + column + "') IS NULL\n"
                + "ALTER TABLE " + t.events() + " ADD " + column + " " + definition;
    }

    /**
     * Filtered: most events carry no correlation id. The lookup repeats the filter's predicate, so the optimizer
     * matches the index whatever the parameter's value.
     */
    private static String correlationIndex(TableNames t) {
        String name = t.constraint("ix", "events_correlation");
        return "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + name + "' AND object_id = OBJECT_ID(N'"
                + t.events() + "'))\n"
                + "CREATE INDEX " + name + " ON " + t.events() + " (tenant_id, correlation_id)"
                + " WHERE correlation_id IS NOT NULL";
    }
}
