package dev.ferret.runtime.events;

import dev.ferret.ConfigurationException;
import dev.ferret.UnknownEventTypeException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Event types by stable alias, both ways. Seeded from the options; a type first seen on append is added under its
 * simple name. Shared by every session of a store; the maps are concurrent and only ever grow.
 */
public final class EventTypes {

    private final ConcurrentHashMap<String, Class<?>> byAlias = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Class<?>, String> byType = new ConcurrentHashMap<>();

    public EventTypes(Map<String, Class<?>> registered) {
        registered.forEach((alias, type) -> {
            byAlias.put(alias, type);
            byType.putIfAbsent(type, alias);
        });
    }

    /** The alias {@code type} is stored under, registering it under its simple name when it is new. */
    public String aliasOf(Class<?> type) {
        String alias = byType.get(type);
        if (alias != null) {
            return alias;
        }
        String simpleName = type.getSimpleName();
        if (simpleName.isEmpty()) {
            throw new ConfigurationException("event type " + type.getName()
                    + " has no simple name (anonymous or hidden class); register it with an explicit alias");
        }
        Class<?> existing = byAlias.putIfAbsent(simpleName, type);
        if (existing != null && existing != type) {
            throw new ConfigurationException("event types " + existing.getName() + " and " + type.getName()
                    + " share the alias '" + simpleName + "'; register one of them with an explicit alias");
        }
        byType.putIfAbsent(type, simpleName);
        return byType.get(type);
    }

    /**
     * The Java type stored under {@code alias}.
     *
     * @throws UnknownEventTypeException naming the alias and {@code sequence} when it is not registered
     */
    public Class<?> typeOf(String alias, long sequence) {
        Class<?> type = byAlias.get(alias);
        if (type == null) {
            throw new UnknownEventTypeException(alias, sequence);
        }
        return type;
    }
}
