package dev.ferret.it.app;

import dev.ferret.StoreOptions;
import dev.ferret.daemon.AsyncListener;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.QuerySession;
import dev.ferret.projections.OutboxMessage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the application sees of Ferret's container hooks: published side effects as CDI events (both forms), and the
 * store's options before it starts.
 */
@ApplicationScoped
public class ItAnnouncements {

    private final Set<String> messageIds = ConcurrentHashMap.newKeySet();
    private final List<String> announcedOrders = new CopyOnWriteArrayList<>();
    private final AtomicLong commitsSeen = new AtomicLong();
    private volatile boolean configured;

    void message(@Observes OutboxMessage message) {
        if (message.payload() instanceof ItEvents.Announced) {
            messageIds.add(message.id());
        }
    }

    void announced(@Observes ItEvents.Announced announced) {
        announcedOrders.add(announced.orderId());
    }

    /** The hook for what configuration keys cannot say: here, a listener around every async commit. */
    void configure(@Observes StoreOptions options) {
        configured = true;
        options.projections().asyncListeners().add(new AsyncListener() {
            @Override
            public void afterCommit(QuerySession session, ChangeSet changes) {
                commitsSeen.incrementAndGet();
            }
        });
    }

    public Set<String> messageIds() {
        return messageIds;
    }

    public List<String> announcedOrders() {
        return announcedOrders;
    }

    public long commitsSeen() {
        return commitsSeen.get();
    }

    public boolean configured() {
        return configured;
    }
}
