package dev.ferret.runtime;

import dev.ferret.QuerySession;
import dev.ferret.runtime.daemon.StoreSessions;
import dev.ferret.runtime.projections.PageBatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * The store's sessions as its daemon sees them. The daemon and the store's sessions each need the other (a page
 * appends raised events through a session; a session heals and waits through the daemon), so this side is bound
 * after both are built: once, by {@link StoreAssembly}, before the daemon starts. Nothing calls it before then,
 * since only page runs do, and those exist only once the daemon started or a rebuild started a shard.
 */
final class DaemonSessions implements StoreSessions {

    private volatile FerretDocumentStore store;

    void bind(FerretDocumentStore boundStore) {
        if (store != null) {
            throw new IllegalStateException("the daemon's sessions are bound to a store already");
        }
        store = boundStore;
    }

    @Override
    public void appendWithin(Connection c, List<PageBatch.RaisedEvent> raised, OffsetDateTime now,
                             List<Runnable> afterTransaction) throws SQLException {
        store.appendWithin(c, raised, now, afterTransaction);
    }

    @Override
    public QuerySession querySession(String tenantId) {
        return store.primaryQuerySession(tenantId);
    }
}
