package dev.ferret.it.app;

import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * An application's own write and a Ferret append in one {@code @Transactional} method: a ledger row through the
 * same data source (JDBC, enlisted in the JTA transaction as JPA's connection would be) and an order placed.
 */
@ApplicationScoped
public class ItLedger {

    /** Transactions held open until released, by order id; opened when the held transaction has appended. */
    static final Map<String, CountDownLatch> RELEASE = new ConcurrentHashMap<>();
    static final Map<String, CountDownLatch> APPENDED = new ConcurrentHashMap<>();

    @Resource(lookup = "java:comp/DefaultDataSource")
    DataSource dataSource;

    @Inject
    DocumentStore store;

    /** Writes the ledger row, appends the order, then fails when asked (rolling back both) or holds. */
    @Transactional
    public void record(String orderId, boolean fail, boolean hold) throws SQLException, InterruptedException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO it_ledger (order_id) VALUES (?)")) {
            ps.setString(1, orderId);
            ps.executeUpdate();
        }
        try (DocumentSession session = store.openSession()) {
            session.events().append(orderId, new ItEvents.Placed(orderId, "ledger"));
            session.saveChanges();
        }
        if (hold) {
            APPENDED.computeIfAbsent(orderId, id -> new CountDownLatch(1)).countDown();
            if (!RELEASE.computeIfAbsent(orderId, id -> new CountDownLatch(1)).await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        }
        if (fail) {
            throw new IllegalStateException("the caller's work failed after the append");
        }
    }

    public long ledgerRows(String orderId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM it_ledger WHERE order_id = ?")) {
            ps.setString(1, orderId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    public void createTable() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS it_ledger (order_id VARCHAR(100) NOT NULL)");
        }
    }
}
