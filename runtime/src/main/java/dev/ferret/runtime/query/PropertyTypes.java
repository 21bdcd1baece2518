package dev.ferret.runtime.query;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Java type a document class declares at a property path, to compare values as that type. Every query asks for
 * its paths, so each answer is found by reflection once per (class, path) and kept: classes and paths are few and
 * their answers never change. The cache is the only state, safe for any thread.
 */
public final class PropertyTypes {

    private static final Map<Class<?>, Map<String, Optional<Class<?>>>> FOUND = new ConcurrentHashMap<>();

    private PropertyTypes() {
    }

    /** The declared type at {@code path} of {@code root}, or empty where the class does not say. */
    public static Optional<Class<?>> at(Class<?> root, PropertyPath path) {
        return FOUND.computeIfAbsent(root, r -> new ConcurrentHashMap<>())
                .computeIfAbsent(path.text(), p -> find(root, path));
    }

    private static Optional<Class<?>> find(Class<?> root, PropertyPath path) {
        Class<?> current = root;
        for (String name : path.segments()) {
            Class<?> next = property(current, name);
            if (next == null) {
                return Optional.empty();
            }
            current = next;
        }
        return current == Object.class ? Optional.empty() : Optional.of(current);
    }

    private static Class<?> property(Class<?> type, String name) {
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                if (component.getName().equals(name)) {
                    return raw(component.getGenericType(), component.getType());
                }
            }
            return null;
        }
        String capitalized = Character.toUpperCase(name.charAt(0)) + name.substring(1);
        for (String getter : new String[] {"get" + capitalized, "is" + capitalized}) {
            try {
                Method method = type.getMethod(getter);
                return raw(method.getGenericReturnType(), method.getReturnType());
            } catch (NoSuchMethodException ignored) {
                // try the next form, then the field
            }
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
                Field field = c.getDeclaredField(name);
                return raw(field.getGenericType(), field.getType());
            } catch (NoSuchFieldException ignored) {
                // look in the superclass
            }
        }
        return null;
    }

    /** Optional<X> declares X; any other generic type its raw class. */
    private static Class<?> raw(Type generic, Class<?> erased) {
        if (erased == Optional.class && generic instanceof ParameterizedType p
                && p.getActualTypeArguments()[0] instanceof Class<?> inner) {
            return inner;
        }
        return erased;
    }
}
