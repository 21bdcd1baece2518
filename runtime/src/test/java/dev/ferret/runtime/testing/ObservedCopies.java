package dev.ferret.runtime.testing;

import java.io.IOException;
import java.io.Reader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

/**
 * pgjdbc's connection as {@link FlakyDataSource} hands it out when unwrapped: its copy API reports each {@code COPY}
 * to the statement observer and fails the ones the failing predicate selects, as a prepared statement would be.
 */
final class ObservedCopies {

    private ObservedCopies() {
    }

    static boolean isDriverConnection(Object[] args) {
        return args != null && args.length == 1 && args[0] instanceof Class<?> type
                && type.getName().equals("org.postgresql.PGConnection");
    }

    static PGConnection unwrap(Connection connection, Consumer<String> statements, Predicate<String> failing)
            throws SQLException {
        PGConnection driver = connection.unwrap(PGConnection.class);
        CopyManager copies = new CopyManager(connection.unwrap(BaseConnection.class)) {
            @Override
            public long copyIn(String sql, Reader from) throws SQLException, IOException {
                statements.accept(sql);
                if (failing.test(sql)) {
                    throw new SQLException("test fault: the copy violates a constraint", "23000");
                }
                return super.copyIn(sql, from);
            }
        };
        return (PGConnection) Proxy.newProxyInstance(PGConnection.class.getClassLoader(),
                new Class<?>[] {PGConnection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getCopyAPI")) {
                        return copies;
                    }
                    try {
                        return method.invoke(driver, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
