package dev.ferret.runtime.events;

import dev.ferret.ConfigurationException;
import dev.ferret.EventUpcast;
import dev.ferret.JsonSerializer;
import dev.ferret.UnknownEventTypeException;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Event types by stable alias, both ways, and the upcasts that carry aliases events were once stored under to the
 * types of today. Seeded from the options; a type first seen on append is added under its simple name. Shared by
 * every session of a store; the maps are concurrent and only ever grow, and the upcasts are fixed at start.
 */
public final class EventTypes {

    private final ConcurrentHashMap<String, Class<?>> byAlias = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Class<?>, String> byType = new ConcurrentHashMap<>();

    private final Map<String, EventUpcast> upcasts;
    /** The alias a stored alias is read as, once its upcasts ran; filled on first use of each stored alias. */
    private final ConcurrentHashMap<String, String> currentAliases = new ConcurrentHashMap<>();

    public EventTypes(Map<String, Class<?>> registered) {
        this(registered, Map.of());
    }

    /**
     * @throws ConfigurationException naming the aliases when an upcast reads an alias a type is registered under,
     *                                leads to an alias nothing reads, or the upcasts go round in a circle
     */
    public EventTypes(Map<String, Class<?>> registered, Map<String, EventUpcast> upcasts) {
        registered.forEach((alias, type) -> {
            byAlias.put(alias, type);
            byType.putIfAbsent(type, alias);
        });
        this.upcasts = Map.copyOf(upcasts);
        for (String from : upcasts.keySet()) {
            if (registered.containsKey(from)) {
                throw new ConfigurationException("event alias '" + from + "' is registered for "
                        + registered.get(from).getName() + " and also upcast: an alias is either current or old");
            }
            currentAlias(from);
        }
    }

    /**
     * The alias an event stored under {@code storedAlias} is read as: itself, or where its upcasts lead.
     *
     * @throws ConfigurationException when the upcasts from it go round in a circle or end at no event type
     */
    public String currentAlias(String storedAlias) {
        if (upcasts.isEmpty()) {
            return storedAlias;
        }
        String known = currentAliases.get(storedAlias);
        if (known != null) {
            return known;
        }
        Set<String> seen = new HashSet<>();
        String at = storedAlias;
        while (upcasts.containsKey(at)) {
            if (!seen.add(at)) {
                throw new ConfigurationException("the upcasts of event alias '" + storedAlias + "' go round in a"
                        + " circle through " + seen);
            }
            EventUpcast step = upcasts.get(at);
            if (step instanceof EventUpcast.TypedStep<?, ?> typed) {
                at = aliasOf(typed.currentType());
                break;
            }
            at = ((EventUpcast.JsonStep) step).toAlias();
            if (!upcasts.containsKey(at) && !byAlias.containsKey(at)) {
                throw new ConfigurationException("event alias '" + step.fromAlias() + "' is upcast to '" + at
                        + "', which is neither a registered event type nor upcast further");
            }
        }
        currentAliases.put(storedAlias, at);
        return at;
    }

    /**
     * The event stored under {@code alias} with {@code json}, read as its type of today: its upcasts run first, on
     * this copy of the JSON only.
     *
     * @throws UnknownEventTypeException naming the alias and {@code sequence} when nothing reads it
     * @throws IllegalStateException     naming the alias, the step and {@code sequence} when an upcast throws
     */
    public Object read(String alias, String json, long sequence, JsonSerializer serializer) {
        String at = alias;
        String data = json;
        while (true) {
            EventUpcast step = upcasts.get(at);
            if (step == null) {
                return serializer.fromJson(data, typeOf(at, sequence));
            }
            try {
                if (step instanceof EventUpcast.TypedStep<?, ?> typed) {
                    return convert(typed, data, serializer);
                }
                EventUpcast.JsonStep rewrite = (EventUpcast.JsonStep) step;
                data = rewrite.transform().apply(parse(data)).toString();
                at = rewrite.toAlias();
            } catch (RuntimeException e) {
                throw new IllegalStateException("upcasting the event at sequence " + sequence + " stored as '"
                        + alias + "' failed at its step from '" + at + "': " + e, e);
            }
        }
    }

    private static <O, T> T convert(EventUpcast.TypedStep<O, T> step, String json, JsonSerializer serializer) {
        return step.currentType().cast(step.convert().apply(serializer.fromJson(json, step.storedShape())));
    }

    private static JsonObject parse(String json) {
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            return reader.readObject();
        }
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
