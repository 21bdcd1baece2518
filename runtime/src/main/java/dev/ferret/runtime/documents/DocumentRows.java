package dev.ferret.runtime.documents;

import dev.ferret.runtime.dialect.BulkCopy;
import dev.ferret.runtime.dialect.CopyRows;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The documents of one table that one {@link DocumentChanges#write} stores the same way (all upserted, or all
 * inserted as new), and how they reach the engine: one statement over arrays per {@link
 * DocumentChanges#MAX_ARRAY_PARAMETER} where the dialect has it, else a JDBC batch; new documents, when there are
 * {@link #COPY_FROM} or more, through the engine's bulk load where it has one and the connection reaches it. Owned
 * by the writing thread.
 */
final class DocumentRows {

    /**
     * The fewest new documents of one table a write copies rather than inserts with a statement: a copy costs a
     * round trip more than a statement (the server answers the COPY before it reads rows), which pays for itself
     * only over many rows (on loopback one row copied took twice as long as one inserted; from a few hundred on, the
     * copy was ahead).
     */
    static final int COPY_FROM = 1_000;

    private final List<String> ids = new ArrayList<>();
    private final List<String> tenants = new ArrayList<>();
    private final List<String> json = new ArrayList<>();

    void add(DocumentChanges.Key key, String document) {
        ids.add(key.id());
        tenants.add(key.tenantId());
        json.add(document);
    }

    /** Writes the rows; {@code insert}: each is known not to exist, and a row that does fails the write. */
    void write(Connection connection, Dialect dialect, DocumentSql sql, OffsetDateTime now, boolean insert)
            throws SQLException {
        if (ids.isEmpty()) {
            return;
        }
        Optional<BulkCopy> copy = insert && sql.copies() && ids.size() >= COPY_FROM
                ? dialect.bulkCopy().filter(bulk -> bulk.supports(connection)) : Optional.empty();
        if (copy.isPresent()) {
            copy(connection, copy.get(), sql.copyIn(), now);
        } else if (sql.upsertsInOneStatement()) {
            try (PreparedStatement ps = connection.prepareStatement(insert ? sql.insertMany() : sql.upsertMany())) {
                for (int from = 0; from < ids.size(); from += DocumentChanges.MAX_ARRAY_PARAMETER) {
                    int to = Math.min(ids.size(), from + DocumentChanges.MAX_ARRAY_PARAMETER);
                    ps.setObject(1, now);
                    dialect.bindUpsertMany(connection, ps, ids.subList(from, to), tenants.subList(from, to),
                            json.subList(from, to));
                    ps.executeUpdate();
                }
            }
        } else {
            try (PreparedStatement ps = connection.prepareStatement(insert ? sql.insert() : sql.upsert())) {
                for (int i = 0; i < ids.size(); i++) {
                    ps.setString(1, ids.get(i));
                    ps.setString(2, tenants.get(i));
                    ps.setString(3, json.get(i));
                    ps.setObject(4, now);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
    }

    /** A copy per {@link DocumentChanges#MAX_ARRAY_PARAMETER} rows, so the text held at once stays bounded. */
    private void copy(Connection connection, BulkCopy copy, String statement, OffsetDateTime now)
            throws SQLException {
        // ISO 8601 with its offset: read the same whatever the session's DateStyle and time zone
        String stamp = DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(now);
        for (int from = 0; from < ids.size(); from += DocumentChanges.MAX_ARRAY_PARAMETER) {
            int to = Math.min(ids.size(), from + DocumentChanges.MAX_ARRAY_PARAMETER);
            CopyRows rows = new CopyRows();
            for (int i = from; i < to; i++) {
                rows.field(ids.get(i)).field(tenants.get(i)).field(json.get(i)).field(1).field(stamp).endRow();
            }
            long copied = copy.copyIn(connection, statement, rows);
            if (copied != rows.rowCount()) {
                throw new SQLException("COPY took " + copied + " of " + rows.rowCount() + " documents");
            }
        }
    }
}
