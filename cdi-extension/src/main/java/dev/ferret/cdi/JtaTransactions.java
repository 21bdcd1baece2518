package dev.ferret.cdi;

import dev.ferret.runtime.context.TransactionRunner;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * The runtime's transaction seam on JTA. Every daemon page (documents, dead letters, progression row) runs in a new
 * JTA transaction of its own. A {@code DocumentSession.saveChanges()} called inside an active JTA transaction (a
 * {@code @Transactional} method, a container-managed EJB call) joins it, so its appends and documents commit or roll
 * back with the caller's JPA or JDBC work; called outside one, it runs in its own. What must wait for the end of the
 * transaction (withdrawing the ownership of the sequence numbers drawn) runs in an interposed
 * {@link Synchronization}, after the container's commit or rollback. With
 * {@code ferret.transactions.join-callers-transaction=false} every unit of work runs in its own transaction, the
 * caller's suspended meanwhile.
 *
 * <p>The connection is obtained inside the transaction, so the container enlists it; this class never commits,
 * rolls back or touches auto-commit. Any exception, checked {@link SQLException}s included, rolls the transaction
 * back: its own by the interceptor, a joined one by marking it rollback-only.
 */
@ApplicationScoped
public class JtaTransactions implements TransactionRunner {

    private static final String REGISTRY = "java:comp/TransactionSynchronizationRegistry";

    @Inject
    NewJtaTransaction newTransaction;

    @Override
    public <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException {
        return newTransaction.run(dataSource, work);
    }

    @Override
    public <T> T inCallersTransaction(DataSource dataSource, Work<T> work, Runnable afterEnd) throws SQLException {
        TransactionSynchronizationRegistry registry = registry();
        int status = registry.getTransactionStatus();
        if (status == Status.STATUS_NO_TRANSACTION) {
            return TransactionRunner.super.inCallersTransaction(dataSource, work, afterEnd);
        }
        if (status != Status.STATUS_ACTIVE) {
            throw new IllegalStateException("saveChanges() was called in a JTA transaction that can no longer"
                    + " commit (status " + status + " of jakarta.transaction.Status)");
        }
        // registered first: whatever the work took before failing is held until the transaction ends
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int outcome) {
                afterEnd.run();
            }
        });
        try (Connection connection = dataSource.getConnection()) {
            return work.run(connection);
        } catch (SQLException | RuntimeException | Error e) {
            registry.setRollbackOnly();
            throw e;
        }
    }

    /** The same transactions, except that a unit of work never joins the caller's: as releases before this one did. */
    public TransactionRunner ownTransactionsOnly() {
        JtaTransactions runner = this;
        return new TransactionRunner() {
            @Override
            public <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException {
                return runner.inTransaction(dataSource, work);
            }

            @Override
            public String toString() {
                return "JTA transactions (each unit of work its own)";
            }
        };
    }

    private static TransactionSynchronizationRegistry registry() {
        try {
            return InitialContext.doLookup(REGISTRY);
        } catch (NamingException e) {
            throw new IllegalStateException("no " + REGISTRY + " in this container: " + e, e);
        }
    }

    @Override
    public String toString() {
        return "JTA transactions (units of work join the caller's)";
    }
}
