package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real JVM signal, driven by real collections. Thresholds are JVM-wide, so each test puts back the ones it found:
 * the other tests in this JVM must not run under a threshold of a few kilobytes.
 */
class MemorySignalTest {

    private final Map<MemoryPoolMXBean, Long> thresholdsFound = new HashMap<>();

    @BeforeEach
    void rememberThresholds() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.isCollectionUsageThresholdSupported()) {
                thresholdsFound.put(pool, pool.getCollectionUsageThreshold());
            }
        }
    }

    @AfterEach
    void restoreThresholds() {
        thresholdsFound.forEach(MemoryPoolMXBean::setCollectionUsageThreshold);
    }

    /** Notifications arrive on a JVM thread some time after the collection that caused them. */
    private static void collectUntilHeard(AtomicInteger heard) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            System.gc();
            return heard.get() > 0;
        });
    }

    @Test
    void aCollectionThatLeavesTheHeapPastTheThresholdIsSignalledAndStaysAboveUntilItFalls() {
        // a millionth of the heap: whatever survives a collection is past it
        try (MemorySignal signal = MemorySignal.jvm(0.000_001)) {
            AtomicInteger pressure = new AtomicInteger();
            signal.listen(pressure::incrementAndGet);
            collectUntilHeard(pressure);
            assertThat(signal.stillAbove()).isTrue();
        }
    }

    @Test
    void aHeapWellBelowTheThresholdIsNeverSignalled() {
        AtomicInteger pressure = new AtomicInteger();
        try (MemorySignal signal = MemorySignal.jvm(0.999)) {
            signal.listen(pressure::incrementAndGet);
            System.gc();
            assertThat(signal.stillAbove()).isFalse();
        }
        assertThat(pressure).hasValue(0);
    }

    @Test
    void aClosedSignalHearsNothingMore() {
        AtomicInteger pressure = new AtomicInteger();
        MemorySignal signal = MemorySignal.jvm(0.000_001);
        signal.listen(pressure::incrementAndGet);
        signal.close();
        // another signal with the same threshold proves the collections below did notify
        try (MemorySignal witness = MemorySignal.jvm(0.000_001)) {
            AtomicInteger heard = new AtomicInteger();
            witness.listen(heard::incrementAndGet);
            collectUntilHeard(heard);
        }
        assertThat(pressure).hasValue(0);
    }
}
