package dev.ferret.runtime.daemon;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a {@link LoadBudget} that the heap is short. The budget {@link #listen listens} once and from then on is told,
 * on any thread, each time the heap is found past the threshold; it asks {@link #stillAbove} only while it is holding
 * work back, so a signal costs nothing while memory is fine.
 */
interface MemorySignal extends AutoCloseable {

    /** Never signals: for budgets without a memory threshold. */
    MemorySignal NONE = new MemorySignal() {
        @Override
        public void listen(Runnable onPressure) {
        }

        @Override
        public boolean stillAbove() {
            return false;
        }
    };

    /** The JVM's collection-usage notifications for heap pools past {@code threshold} (a fraction of their max). */
    static MemorySignal jvm(double threshold) {
        return new Jvm(threshold);
    }

    /** Starts signalling; {@code onPressure} may run on any thread, and must be quick. */
    void listen(Runnable onPressure);

    /** Whether the heap is still past the threshold; asked only while under pressure. */
    boolean stillAbove();

    @Override
    default void close() {
    }

    /**
     * Heap pools' collection-usage thresholds: the JVM tells us after a GC that left too much in use. The thresholds
     * are JVM-wide, so a pool keeps the lowest one any budget asked for (and keeps it past close, as another budget may
     * rely on it), and each signal judges notifications and usage against its own limits: two stores in one JVM never
     * act on each other's thresholds.
     */
    final class Jvm implements MemorySignal {

        private static final Logger LOG = LoggerFactory.getLogger(Jvm.class);
        private final List<MemoryPoolMXBean> pools;
        private final long[] limits;
        private volatile NotificationListener listener;

        Jvm(double threshold) {
            this.pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(pool -> pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()
                            && (long) (pool.getUsage().getMax() * threshold) > 0)
                    .toList();
            this.limits = pools.stream().mapToLong(pool -> (long) (pool.getUsage().getMax() * threshold)).toArray();
        }

        @Override
        public void listen(Runnable onPressure) {
            for (int i = 0; i < pools.size(); i++) {
                MemoryPoolMXBean pool = pools.get(i);
                long current = pool.getCollectionUsageThreshold();
                pool.setCollectionUsageThreshold(current > 0 ? Math.min(current, limits[i]) : limits[i]);
            }
            NotificationListener heard = (notification, handback) -> {
                if (isOurs(notification)) {
                    onPressure.run();
                }
            };
            emitter().addNotificationListener(heard, null, null);
            listener = heard;
        }

        private boolean isOurs(Notification notification) {
            if (!MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED.equals(notification.getType())) {
                return false;
            }
            MemoryNotificationInfo info = MemoryNotificationInfo.from((CompositeData) notification.getUserData());
            for (int i = 0; i < pools.size(); i++) {
                if (pools.get(i).getName().equals(info.getPoolName())) {
                    return info.getUsage().getUsed() >= limits[i];
                }
            }
            return false;
        }

        @Override
        public boolean stillAbove() {
            for (int i = 0; i < pools.size(); i++) {
                MemoryUsage afterGc = pools.get(i).getCollectionUsage();
                if (afterGc != null && afterGc.getUsed() >= limits[i]) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void close() {
            NotificationListener heard = listener;
            if (heard == null) {
                return;
            }
            listener = null;
            try {
                emitter().removeNotificationListener(heard);
            } catch (Exception e) {
                // safe: a listener that is not registered any more receives nothing
                LOG.debug("Removing the heap notification listener failed; it was gone already", e);
            }
        }

        private static NotificationEmitter emitter() {
            return (NotificationEmitter) ManagementFactory.getMemoryMXBean();
        }
    }
}
