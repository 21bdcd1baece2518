package dev.ferret;

/**
 * Turns events and documents into JSON text and back. The default uses Jakarta JSON-B; implementations must be
 * thread-safe and round-trip records.
 */
public interface JsonSerializer {

    String toJson(Object value);

    <T> T fromJson(String json, Class<T> type);
}
