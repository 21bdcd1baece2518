package dev.ferret.runtime.dialect.postgresql;

import dev.ferret.runtime.dialect.BulkCopy;
import dev.ferret.runtime.dialect.CopyRows;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import org.postgresql.PGConnection;

/**
 * {@link BulkCopy} through pgjdbc's {@code CopyManager}. Made only when the driver's classes are visible to Ferret's
 * class loader ({@link #ifDriverVisible}): in an application server the driver may live where Ferret cannot see it,
 * and then every write stays a statement.
 */
final class PostgresCopy implements BulkCopy {

    private static final String DRIVER_CONNECTION = "org.postgresql.PGConnection";

    private PostgresCopy() {
    }

    static Optional<BulkCopy> ifDriverVisible() {
        try {
            Class.forName(DRIVER_CONNECTION, false, PostgresCopy.class.getClassLoader());
            return Optional.of(new PostgresCopy());
        } catch (ClassNotFoundException | LinkageError e) {
            return Optional.empty();
        }
    }

    @Override
    public boolean supports(Connection connection) {
        try {
            return connection.isWrapperFor(PGConnection.class);
        } catch (SQLException e) {
            return false;
        }
    }

    @Override
    public long copyIn(Connection connection, String copyStatement, CopyRows rows) throws SQLException {
        try {
            return connection.unwrap(PGConnection.class).getCopyAPI().copyIn(copyStatement, rows.reader());
        } catch (IOException e) {
            // the rows' reader does not fail; the driver reports a broken connection as an SQLException
            throw new SQLException("COPY could not read its rows: " + e, e);
        }
    }
}
