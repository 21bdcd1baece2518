package dev.ferret.runtime.daemon;

import dev.ferret.QuerySession;
import dev.ferret.runtime.projections.PageBatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * What a shard's page needs of the store's sessions: the append path for events its projections raised, and query
 * sessions for after-commit listeners. The store supplies it; the daemon never sees the store itself.
 */
public interface StoreSessions {

    /**
     * Appends events a page raised in the page's own transaction, on its connection {@code c}, one unit of work per
     * tenant in the order raised. What must run once the page's transaction has ended is added to
     * {@code afterTransaction}.
     */
    void appendWithin(Connection c, List<PageBatch.RaisedEvent> raised, OffsetDateTime now,
                      List<Runnable> afterTransaction) throws SQLException;

    /** A query session of {@code tenantId}. */
    QuerySession querySession(String tenantId);
}
