package dev.ferret.runtime.testing;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source that fails at exact steps, on any engine: it refuses connections while {@link #down} is set (an
 * outage), or only to the threads {@link #refuseTo} selects; and it can let a commit reach the server and then
 * report it failed, as when the connection dies while the reply to {@code COMMIT} is on its way.
 */
public final class FlakyDataSource implements DataSource {

    private final DataSource delegate;
    private volatile boolean down;
    private volatile Predicate<Thread> refused = thread -> false;
    private volatile Predicate<Thread> lostCommitReplies = thread -> false;
    private final AtomicInteger lostRepliesLeft = new AtomicInteger();
    private final AtomicInteger lostReplies = new AtomicInteger();
    private final AtomicInteger refusals = new AtomicInteger();
    private volatile Predicate<Thread> forgottenCommits = thread -> false;
    private final AtomicInteger forgetsLeft = new AtomicInteger();
    private final AtomicInteger forgotten = new AtomicInteger();

    private volatile Consumer<String> statements = sql -> { };
    private volatile Predicate<String> failing = sql -> false;

    public FlakyDataSource(DataSource delegate) {
        this.delegate = delegate;
    }

    /** Sees the text of every statement prepared (or, on PostgreSQL, copy run) on a connection of this source. */
    public void observeStatements(Consumer<String> observer) {
        this.statements = observer;
    }

    /**
     * Fails the preparation of every statement whose text {@code which} selects, with a non-transient error (a
     * constraint the engine enforces); {@code sql -> false} heals.
     */
    public void failStatements(Predicate<String> which) {
        this.failing = which;
    }

    public void down(boolean down) {
        this.down = down;
    }

    /** Refuses connections to the threads {@code threads} selects (a selective outage); {@code t -> false} heals. */
    public void refuseTo(Predicate<Thread> threads) {
        this.refused = threads;
    }

    /**
     * The next {@code times} commits on threads {@code threads} selects reach the server, which commits, and then
     * throw as if the connection died before the reply arrived.
     */
    public void loseCommitReplies(Predicate<Thread> threads, int times) {
        this.lostCommitReplies = threads;
        this.lostRepliesLeft.set(times);
    }

    /**
     * The next {@code times} commits on threads {@code threads} selects report success and are rolled back: what a
     * server crash does to commits that did not wait for the flush (the client saw them succeed; the restarted
     * server never had them).
     */
    public void forgetCommits(Predicate<Thread> threads, int times) {
        this.forgottenCommits = threads;
        this.forgetsLeft.set(times);
    }

    /** How many commits were forgotten so far. */
    public int forgottenCommits() {
        return forgotten.get();
    }

    /** How many commit replies were lost so far. */
    public int lostReplies() {
        return lostReplies.get();
    }

    /** Selects the daemon's page workers by their thread names. */
    public static Predicate<Thread> shardWorkers() {
        return thread -> thread.getName().contains("-shard-");
    }

    /** How many connections were refused so far. */
    public int refusals() {
        return refusals.get();
    }

    private void check() throws SQLException {
        if (down || refused.test(Thread.currentThread())) {
            refusals.incrementAndGet();
            throw new SQLTransientConnectionException("test outage: database unreachable", "08001");
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        check();
        return wrap(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        check();
        return wrap(delegate.getConnection(username, password));
    }

    private Connection wrap(Connection connection) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("prepareStatement") && args != null
                            && args[0] instanceof String sql) {
                        statements.accept(sql);
                        if (failing.test(sql)) {
                            throw new SQLException("test fault: the statement violates a constraint", "23000");
                        }
                    }
                    if (method.getName().equals("commit") && forgottenCommits.test(Thread.currentThread())
                            && forgetsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        connection.rollback();
                        forgotten.incrementAndGet();
                        return null;
                    }
                    if (method.getName().equals("unwrap") && ObservedCopies.isDriverConnection(args)) {
                        return ObservedCopies.unwrap(connection, statements, failing);
                    }
                    Object result;
                    try {
                        result = method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("commit") && lostCommitReplies.test(Thread.currentThread())
                            && lostRepliesLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        lostReplies.incrementAndGet();
                        throw new SQLTransientConnectionException(
                                "test fault: the connection died before the reply to COMMIT arrived", "08006");
                    }
                    return result;
                });
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return delegate.isWrapperFor(iface);
    }
}
