package dev.ferret.it.versions;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds version 2's first event until the test opens it, so that the test sees it warming up. */
public final class VersionGate {

    private static final CountDownLatch OPEN = new CountDownLatch(1);

    private VersionGate() {
    }

    static void open() {
        OPEN.countDown();
    }

    static void await() {
        try {
            // long enough for a slow deploy: the test opens it once the deployment answers, and in its finally
            if (!OPEN.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the test never opened the gate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
