package dev.ferret.runtime.query;

import jakarta.json.bind.annotation.JsonbProperty;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

    /**
     * Refuses a path that names no property of a class that declares its properties: a typo such as {@code stauts}
     * would otherwise match nothing, silently. Checked down the path while each class declares its properties (an
     * application class: a record or a bean); a map, an interface, an abstract class, {@code Object} or a JDK type ends
     * the check, since the JSON below it is not known. Names are the Java names, and those {@code @JsonbProperty}
     * gives.
     *
     * @throws IllegalArgumentException naming the path, the class, the nearest property and every property it has
     */
    public static void requireDeclared(Class<?> root, PropertyPath path) {
        Class<?> current = root;
        for (String name : path.segments()) {
            if (!declaresProperties(current)) {
                return;
            }
            Class<?> next = property(current, name);
            if (next == null) {
                List<String> known = names(current);
                String nearest = nearest(name, known);
                throw new IllegalArgumentException("'" + path.text() + "': " + current.getSimpleName()
                        + " has no property '" + name + "'" + (nearest == null ? "" : " (did you mean '" + nearest
                        + "'?)") + "; its properties are " + known);
            }
            current = next;
        }
    }

    /** Whether the JSON of {@code type} has exactly the properties the class declares. */
    private static boolean declaresProperties(Class<?> type) {
        // an interface or an abstract class is written as the class of its value, whose properties are not known here
        if (type.isPrimitive() || type.isArray() || type.isInterface() || type.isEnum() || type == Object.class
                || Modifier.isAbstract(type.getModifiers())
                || Map.class.isAssignableFrom(type) || Iterable.class.isAssignableFrom(type)) {
            return false;
        }
        String name = type.getName();
        return !name.startsWith("java.") && !name.startsWith("javax.") && !name.startsWith("jakarta.");
    }

    /** The names a path may use on {@code type}, in declaration order. */
    private static List<String> names(Class<?> type) {
        Set<String> names = new LinkedHashSet<>();
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                names.add(component.getName());
                renamed(component).ifPresent(names::add);
            }
            return List.copyOf(names);
        }
        for (Method method : type.getMethods()) {
            String getter = method.getName();
            if (method.getParameterCount() == 0 && method.getDeclaringClass() != Object.class) {
                String bare = getter.startsWith("get") && getter.length() > 3 ? getter.substring(3)
                        : getter.startsWith("is") && getter.length() > 2 ? getter.substring(2) : null;
                if (bare != null) {
                    names.add(Character.toLowerCase(bare.charAt(0)) + bare.substring(1));
                    renamed(method.getAnnotation(JsonbProperty.class)).ifPresent(names::add);
                }
            }
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (!Modifier.isStatic(field.getModifiers()) && !field.isSynthetic()) {
                    names.add(field.getName());
                    renamed(field.getAnnotation(JsonbProperty.class)).ifPresent(names::add);
                }
            }
        }
        return List.copyOf(names);
    }

    /**
     * A record component's {@code @JsonbProperty}: the annotation does not target record components, so Java puts
     * it on the accessor and the field the component makes.
     */
    private static Optional<String> renamed(RecordComponent component) {
        Optional<String> onAccessor = renamed(component.getAccessor().getAnnotation(JsonbProperty.class));
        if (onAccessor.isPresent()) {
            return onAccessor;
        }
        try {
            return renamed(component.getDeclaringRecord().getDeclaredField(component.getName())
                    .getAnnotation(JsonbProperty.class));
        } catch (NoSuchFieldException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> renamed(JsonbProperty annotation) {
        return annotation == null || annotation.value().isEmpty() ? Optional.empty() : Optional.of(annotation.value());
    }

    /** The known name closest to {@code name} by edit distance, when it is close enough to be a typo. */
    private static String nearest(String name, List<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known) {
            int distance = EditDistance.between(name.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return bestDistance <= Math.max(2, name.length() / 3) ? best : null;
    }

    private static Class<?> property(Class<?> type, String name) {
        Class<?> declared = javaProperty(type, name);
        return declared != null ? declared : annotatedProperty(type, name);
    }

    /** The property whose {@code @JsonbProperty} is {@code name}. */
    private static Class<?> annotatedProperty(Class<?> type, String name) {
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                if (renamed(component).filter(name::equals).isPresent()) {
                    return raw(component.getGenericType(), component.getType());
                }
            }
            return null;
        }
        for (Method method : type.getMethods()) {
            if (method.getParameterCount() == 0
                    && renamed(method.getAnnotation(JsonbProperty.class)).filter(name::equals).isPresent()) {
                return raw(method.getGenericReturnType(), method.getReturnType());
            }
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (renamed(field.getAnnotation(JsonbProperty.class)).filter(name::equals).isPresent()) {
                    return raw(field.getGenericType(), field.getType());
                }
            }
        }
        return null;
    }

    private static Class<?> javaProperty(Class<?> type, String name) {
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
