package dev.ferret.runtime.dialect;

import dev.ferret.ConfigurationException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Maps a lock name to the 64-bit key PostgreSQL advisory locks take: the first eight bytes, big-endian, of the
 * SHA-256 of the name's UTF-8 bytes. Stable across JVMs and releases, so every node computes the same key.
 */
public final class AdvisoryLockKeys {

    private AdvisoryLockKeys() {
    }

    public static long keyOf(String lockName) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(lockName.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(digest, 0, Long.BYTES).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    /**
     * Checks that {@code lockNames} map to distinct keys, so that no two of a store's shards can ever share a lock.
     *
     * @throws dev.ferret.ConfigurationException naming the two names that collide
     */
    public static void requireDistinct(Collection<String> lockNames) {
        Map<Long, String> seen = new HashMap<>();
        for (String name : lockNames) {
            String other = seen.putIfAbsent(keyOf(name), name);
            if (other != null && !other.equals(name)) {
                throw new ConfigurationException("lock names '" + other + "' and '" + name
                        + "' hash to the same advisory lock key " + keyOf(name) + "; rename one of the shards");
            }
        }
    }

    /** The name of the lock that serializes schema migration of one schema. */
    public static String migrationLockName(String schema) {
        return "ferret:migration:" + schema.toLowerCase(Locale.ROOT);
    }
}
