package dev.ferret.runtime.documents;

import dev.ferret.IdLimits;
import dev.ferret.MissingIdException;
import dev.ferret.StoreOptions.DocumentType;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.TableNames;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * How one document type is stored: its table, its statements and how to read its id. Built once at startup.
 */
public final class DocumentMapping<T> {

    private static final Set<Class<?>> ID_TYPES = Set.of(String.class, UUID.class, Long.class, long.class,
            Integer.class, int.class);

    private final Class<T> type;
    private final String name;
    private final Function<T, ?> idReader;
    private final DocumentSql sql;
    private final SchemaObject table;

    private DocumentMapping(Class<T> type, String name, Function<T, ?> idReader, DocumentSql sql,
                            SchemaObject table) {
        this.type = type;
        this.name = name;
        this.idReader = idReader;
        this.sql = sql;
        this.table = table;
    }

    public static <T> DocumentMapping<T> of(DocumentType<T> registration, Dialect dialect, TableNames names) {
        Function<T, ?> idReader = registration.id() != null ? registration.id() : findId(registration.type());
        return new DocumentMapping<>(registration.type(), registration.name(), idReader,
                dialect.documentSql(names, registration.name()), dialect.documentTable(names, registration.name()));
    }

    public Class<T> type() {
        return type;
    }

    public String name() {
        return name;
    }

    public DocumentSql sql() {
        return sql;
    }

    public SchemaObject table() {
        return table;
    }


    /**
     * The stored form of {@code document}'s id.
     *
     * @throws IllegalArgumentException when it is longer than {@link IdLimits#MAX_ID_LENGTH}
     */
    public String idOf(Object document) {
        Object id = idReader.apply(type.cast(document));
        if (id == null) {
            throw new MissingIdException("cannot store a " + type.getName() + " whose id is null");
        }
        return IdLimits.requireDocumentId(type, id.toString());
    }

    /**
     * The stored form of an id handed in by the caller.
     *
     * @throws IllegalArgumentException when it is null or longer than {@link IdLimits#MAX_ID_LENGTH}
     */
    public String idFrom(Object id) {
        if (id == null) {
            throw new IllegalArgumentException("id of " + type.getName() + " must not be null");
        }
        return IdLimits.requireDocumentId(type, id.toString());
    }

    private static <T> Function<T, ?> findId(Class<T> type) {
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                if (component.getName().equals("id")) {
                    return invoking(requireIdType(type, component.getType()), component.getAccessor());
                }
            }
        }
        for (String getter : new String[] {"getId", "id"}) {
            try {
                Method method = type.getMethod(getter);
                if (!Modifier.isStatic(method.getModifiers())) {
                    return invoking(requireIdType(type, method.getReturnType()), method);
                }
            } catch (NoSuchMethodException ignored) {
                // try the next shape
            }
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
                Field field = c.getDeclaredField("id");
                requireIdType(type, field.getType());
                field.setAccessible(true);
                return document -> {
                    try {
                        return field.get(document);
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException(e);
                    }
                };
            } catch (NoSuchFieldException ignored) {
                // look in the superclass
            }
        }
        throw new MissingIdException("document type " + type.getName() + " has no id: give it a record component,"
                + " getter or field named 'id' of type String, UUID, long or int, or register it with an explicit"
                + " id function");
    }

    private static Class<?> requireIdType(Class<?> documentType, Class<?> idType) {
        if (!ID_TYPES.contains(idType)) {
            throw new MissingIdException("the id of document type " + documentType.getName() + " is a "
                    + idType.getName() + "; ids must be String, UUID, long or int");
        }
        return idType;
    }

    private static <T> Function<T, ?> invoking(Class<?> idType, Method accessor) {
        accessor.setAccessible(true);
        return document -> {
            try {
                return accessor.invoke(document);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            } catch (InvocationTargetException e) {
                throw new IllegalStateException("id accessor " + accessor + " threw", e.getCause());
            }
        };
    }
}
