package dev.ferret.runtime.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Holds a projection's applies at an exact step: while closed, every {@link #pass} waits (at most a minute) until a
 * test opens it, and {@link #held} tells the test that a page has reached its applies (it has read its documents).
 * Shared by the applies of a test's projection and the test thread.
 */
public final class ApplyGate {

    private volatile CountDownLatch latch;
    private final AtomicInteger held = new AtomicInteger();

    /** From now on applies wait. */
    public void close() {
        latch = new CountDownLatch(1);
    }

    /** Lets every waiting and later apply through. */
    public void open() {
        CountDownLatch current = latch;
        if (current != null) {
            current.countDown();
        }
    }

    /** Opens and forgets: for a test's cleanup. */
    public void reset() {
        open();
        latch = null;
        held.set(0);
    }

    /** How many applies have waited at the gate. */
    public int held() {
        return held.get();
    }

    /** Called by an apply: waits while the gate is closed. */
    public void pass() {
        CountDownLatch current = latch;
        if (current == null) {
            return;
        }
        held.incrementAndGet();
        try {
            if (!current.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
