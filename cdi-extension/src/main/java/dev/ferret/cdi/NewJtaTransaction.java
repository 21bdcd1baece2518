package dev.ferret.cdi;

import dev.ferret.runtime.context.TransactionRunner.Work;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Work in a JTA transaction of its own ({@code REQUIRES_NEW}: a caller's transaction is suspended meanwhile). A bean
 * apart from {@link JtaTransactions}, so the transaction interceptor runs on every call: a call from inside that
 * bean would bypass its own interceptor. Public for the container's proxies only; not part of the API.
 */
@ApplicationScoped
public class NewJtaTransaction {

    @Transactional(value = Transactional.TxType.REQUIRES_NEW, rollbackOn = Exception.class)
    public <T> T run(DataSource dataSource, Work<T> work) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return work.run(connection);
        }
    }
}
