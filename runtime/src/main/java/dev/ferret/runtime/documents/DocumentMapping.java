package dev.ferret.runtime.documents;

import dev.ferret.ConfigurationException;
import dev.ferret.IdLimits;
import dev.ferret.MissingIdException;
import dev.ferret.StoreOptions;
import dev.ferret.StoreOptions.DocumentType;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.DocumentIndexSql;
import dev.ferret.runtime.dialect.DocumentSql;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.dialect.ValueKind;
import dev.ferret.runtime.query.PropertyPath;
import dev.ferret.runtime.query.PropertyTypes;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * How one document type is stored: its table, its indexes, its statements and how to read its id. Built once at
 * startup; its indexes are added by {@link DocumentMappings} before any session sees it, and never after.
 */
public final class DocumentMapping<T> {

    /** PostgreSQL's identifier length, the shortest of the three engines'. */
    private static final int MAX_IDENTIFIER = 63;
    private static final Set<Class<?>> ID_TYPES = Set.of(String.class, UUID.class, Long.class, long.class,
            Integer.class, int.class);

    private final Class<T> type;
    private final String name;
    private final Function<T, ?> idReader;
    private final DocumentSql sql;
    private final SchemaObject table;
    private final List<SchemaObject> indexes = new ArrayList<>();
    /** What queries write for an indexed path read as a kind, by {@code path|KIND}. */
    private final Map<String, String> indexedExpressions = new HashMap<>();
    /** Each generated column's path, so that two paths never share a column (one would read the other's values). */
    private final Map<String, String> columnPaths = new HashMap<>();
    /**
     * Whether query and index paths must name the class's declared properties: set once at startup, before any
     * session sees the mapping; off when the application serializes documents itself (its naming is not known).
     */
    private boolean checksPaths;
    /** The declared indexes whose keys the engine limits, checked before every write. */
    private final List<IndexedValues> limitedIndexes = new ArrayList<>();
    /** Where a rebuild of the projection writing this table replays; null for documents no projection writes. */
    private ShadowTable shadow;
    /** Set at assembly ({@link #addWriter}), read-only from the first shard's start. */
    private volatile List<String> writers = List.of();

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

    /**
     * Adds the declared index {@code index} of this type: its schema object and what queries write for its paths.
     *
     * @throws ConfigurationException naming the type and the path when a path is not one, or the engine cannot index it
     */
    void addIndex(StoreOptions.DocumentIndex index, Dialect dialect, TableNames names) {
        List<DocumentIndexSql.Key> keys = new ArrayList<>();
        List<String> pathTexts = new ArrayList<>();
        for (String text : index.paths()) {
            PropertyPath path;
            try {
                path = PropertyPath.parse(text);
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("index of document " + type.getName() + ": " + e.getMessage());
            }
            if (checksPaths) {
                try {
                    PropertyTypes.requireDeclared(type, path);
                } catch (IllegalArgumentException e) {
                    throw new ConfigurationException("index of document " + type.getName() + ": " + e.getMessage());
                }
            }
            ValueKind kind = PropertyTypes.at(type, path).map(ValueKind::ofType).orElse(ValueKind.TEXT);
            String column = identifier("q_" + flattened(path.segments()));
            String taken = columnPaths.putIfAbsent(column + "|" + kind, text);
            if (taken != null && !taken.equals(text)) {
                throw new ConfigurationException("index of document " + type.getName() + ": the paths '" + taken
                        + "' and '" + text + "' would share the generated column " + column + "; rename a property");
            }
            keys.add(new DocumentIndexSql.Key(path.segments(), kind, column));
            pathTexts.add(flattened(path.segments()));
        }
        String indexName = identifier((index.unique() ? "ux_" : "ix_") + names.documentTableName(name) + "_"
                + String.join("_", pathTexts));
        DocumentIndexSql sql = dialect.documentIndex(names, name, indexName, keys, index.unique());
        indexes.add(SchemaObject.index(indexName, sql.ddl()));
        if (dialect.indexKeyLimit().limited()) {
            limitedIndexes.add(new IndexedValues(indexName, keys, index.paths(), index.unique(),
                    dialect.indexKeyLimit()));
        }
        for (int i = 0; i < keys.size(); i++) {
            indexedExpressions.put(index.paths().get(i) + "|" + keys.get(i).kind(), sql.queryExpressions().get(i));
        }
    }

    /**
     * A path as one identifier part: its segments joined with {@code _}. A segment that holds a {@code _} itself
     * would make that ambiguous ({@code a.b_c} and {@code a_b.c}), so such a path also carries a hash of its dotted
     * text; paths of plain camel-case segments keep the names earlier releases gave them.
     */
    private static String flattened(List<String> segments) {
        String joined = String.join("_", segments);
        if (segments.stream().noneMatch(segment -> segment.contains("_"))) {
            return joined;
        }
        return joined + "_" + String.format("%08x", String.join(".", segments).hashCode());
    }

        /** {@code text} if it fits every engine's identifiers (63 characters), else its start and a hash of it. */
    private static String identifier(String text) {
        if (text.length() <= MAX_IDENTIFIER) {
            return text;
        }
        return text.substring(0, MAX_IDENTIFIER - 9) + "_" + String.format("%08x", text.hashCode());
    }

    /**
     * Refuses the document {@code json} before it is written when a declared index of this type cannot hold its key.
     *
     * @throws IllegalArgumentException naming the document, the index, the path and the engine's limit
     */
    void checkIndexedValues(String tenantId, String id, String json) {
        for (IndexedValues index : limitedIndexes) {
            index.check(name, tenantId, id, json);
        }
    }

    /** See {@link #checksPaths()}; called by {@link DocumentMappings} before any index is added. */
    void checkPaths(boolean on) {
        this.checksPaths = on;
    }

    /** Whether query and index paths must name a property the document class declares. */
    public boolean checksPaths() {
        return checksPaths;
    }

    /** The schema objects of this type's declared indexes. */
    public List<SchemaObject> indexes() {
        return List.copyOf(indexes);
    }

    /** What queries write for {@code path} read as {@code kind} to use a declared index, or empty without one. */
    public Optional<String> indexedExpression(String path, ValueKind kind) {
        return Optional.ofNullable(indexedExpressions.get(path + "|" + kind));
    }

    public SchemaObject table() {
        return table;
    }

    /** Gives this table a shadow for rebuilds; called by {@link DocumentMappings} at startup, before any use. */
    void addShadow(Dialect dialect, TableNames names) {
        shadow = ShadowTable.of(name, dialect, names);
    }

    /**
     * Records that projection {@code writer} (its name and version) writes this table; called at assembly, before
     * any shard runs, and never after.
     */
    public void addWriter(String writer) {
        List<String> more = new ArrayList<>(writers);
        more.add(writer);
        writers = List.copyOf(more);
    }

    /** The projections, inline or async, that write this table, one entry per registration. */
    public List<String> writers() {
        return writers;
    }

    /** The table a rebuild replays into, or null when no projection writes this one. */
    public ShadowTable shadow() {
        return shadow;
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
