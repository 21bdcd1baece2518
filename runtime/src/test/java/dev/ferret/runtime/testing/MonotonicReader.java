package dev.ferret.runtime.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A reader querying a read model in a loop on a thread of its own, as an application's would during a rebuild or a
 * version switch: it records every read (document id to a value that only grows) and the first time it sees fewer
 * documents, or a lower value, than the read before.
 */
public final class MonotonicReader implements AutoCloseable {

    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<String> violation = new AtomicReference<>();
    private final List<Map<String, Long>> seen = new ArrayList<>();
    private final Thread thread;

    /** Starts reading with {@code read}, which returns the read model as id to value. */
    public MonotonicReader(String name, Supplier<Map<String, Long>> read) {
        thread = new Thread(() -> {
            Map<String, Long> last = read.get();
            while (!stop.get() && violation.get() == null) {
                Map<String, Long> now = read.get();
                if (now.size() < last.size()) {
                    violation.set("fewer documents: " + last + " then " + now);
                }
                for (Map.Entry<String, Long> before : last.entrySet()) {
                    if (now.getOrDefault(before.getKey(), -1L) < before.getValue()) {
                        violation.set("an older state: " + last + " then " + now);
                    }
                }
                synchronized (seen) {
                    seen.add(now);
                }
                last = now;
            }
        }, name);
        thread.start();
    }

    /** How many reads it made. */
    public int reads() {
        synchronized (seen) {
            return seen.size();
        }
    }

    /** Its latest read; empty before the first. */
    public Map<String, Long> lastSeen() {
        synchronized (seen) {
            return seen.isEmpty() ? Map.of() : seen.get(seen.size() - 1);
        }
    }

    /** Every read it made, in order. */
    public List<Map<String, Long>> seen() {
        synchronized (seen) {
            return List.copyOf(seen);
        }
    }

    /** What it saw go backwards first, or null. */
    public String violation() {
        return violation.get();
    }

    /** Stops it and waits for its thread (a bounded wait). */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        thread.join(TimeUnit.SECONDS.toMillis(60));
    }
}
