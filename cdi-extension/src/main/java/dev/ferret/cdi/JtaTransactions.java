package dev.ferret.cdi;

import dev.ferret.runtime.tx.TransactionRunner;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The runtime's transaction seam on JTA: every daemon page (documents, dead letters, progression row) and every
 * {@code DocumentSession.saveChanges()} runs in a new JTA transaction ({@code REQUIRES_NEW}: a caller's transaction
 * is suspended, as Ferret units of work commit on their own, as in Java SE). The connection is obtained inside the
 * transaction, so the container enlists it; this class never commits, rolls back or touches auto-commit. Any
 * exception, checked {@link SQLException}s included, rolls the transaction back; a page cancelled on stop is
 * interrupted, fails, and rolls back the same way.
 */
@ApplicationScoped
public class JtaTransactions implements TransactionRunner {

    @Override
    @Transactional(value = Transactional.TxType.REQUIRES_NEW, rollbackOn = Exception.class)
    public <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return work.run(connection);
        }
    }

    @Override
    public String toString() {
        return "JTA transactions (REQUIRES_NEW)";
    }
}
