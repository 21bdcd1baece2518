package dev.ferret.runtime.daemon;

import java.util.UUID;

/** An event quarantined by {@code skipApplyErrors}, written in the page's transaction. */
record DeadLetter(long sequence, UUID eventId, String typeName, String streamId, String tenantId, Throwable error) {
}
