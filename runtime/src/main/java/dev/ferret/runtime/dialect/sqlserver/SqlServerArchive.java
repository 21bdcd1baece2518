package dev.ferret.runtime.dialect.sqlserver;

import dev.ferret.runtime.dialect.ArchiveSql;
import dev.ferret.runtime.dialect.TableNames;

/** Stream archiving on SQL Server: as everywhere, but the way back into the live table writes its identity column. */
final class SqlServerArchive {

    private SqlServerArchive() {
    }

    static ArchiveSql statements(TableNames t) {
        return new ArchiveSql(
                "UPDATE " + t.streams() + " SET archived = ? WHERE tenant_id = ? AND id = ?",
                ArchiveSql.copy(t.events(), t.eventsArchive(), ""),
                "DELETE FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ?",
                ArchiveSql.copy(t.events(), t.eventsArchive(), ArchiveSql.MARKERS),
                "DELETE FROM " + t.events() + " WHERE tenant_id = ? AND stream_id = ?" + ArchiveSql.MARKERS,
                // seq_id is an IDENTITY column: explicit values need IDENTITY_INSERT, which must not stay ON for the
                // session if the insert fails (every later append to the table would then be refused)
                "SET IDENTITY_INSERT " + t.events() + " ON;\n"
                        + "BEGIN TRY\n"
                        + ArchiveSql.copy(t.eventsArchive(), t.events(), ArchiveSql.NOT_MARKERS) + ";\n"
                        + "SET IDENTITY_INSERT " + t.events() + " OFF;\n"
                        + "END TRY\n"
                        + "BEGIN CATCH\n"
                        + "SET IDENTITY_INSERT " + t.events() + " OFF;\n"
                        + "THROW;\n"
                        + "END CATCH",
                "DELETE FROM " + t.eventsArchive() + " WHERE tenant_id = ? AND stream_id = ?" + ArchiveSql.NOT_MARKERS,
                ArchiveSql.withArchived(t), ArchiveSql.lockStream(t), ArchiveSql.selectThrough(t),
                ArchiveSql.copyReplaced(t), ArchiveSql.deleteReplaced(t), ArchiveSql.replaceWithSnapshot(t, "?"));
    }
}
