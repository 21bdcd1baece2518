package dev.ferret.runtime.documents;

import dev.ferret.ConfigurationException;
import dev.ferret.FerretException;
import dev.ferret.StoreOptions;
import dev.ferret.projections.AggregateProjection;
import dev.ferret.projections.Projection;
import dev.ferret.projections.ProjectionOptions;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.SchemaObject;
import dev.ferret.runtime.dialect.TableNames;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Every document type of a store and the table each version of a projection writes. Immutable, built once at
 * startup from the options, then read without locks by sessions and agents.
 *
 * <p>A version above 1 of an aggregate projection keeps its documents in a table of its own, so it can rebuild while
 * the prior version serves reads; reads go to the highest version registered once it caught up with the one before
 * it, and to that one's table until then ({@link #priorVersion}).
 */
public final class DocumentMappings {

    /** What reads use: the base mapping, or the highest registered version's. */
    private final Map<Class<?>, DocumentMapping<?>> reads;
    /** Version 1 (and plain documents). */
    private final Map<Class<?>, DocumentMapping<?>> base;
    /** Versions above 1, by {@code type name @ version}. */
    private final Map<String, DocumentMapping<?>> versioned;
    /** The version reads go to, for types a projection version above 1 writes. */
    private final Map<Class<?>, Integer> readVersions;

    private DocumentMappings(Map<Class<?>, DocumentMapping<?>> reads, Map<Class<?>, DocumentMapping<?>> base,
                             Map<String, DocumentMapping<?>> versioned, Map<Class<?>, Integer> readVersions) {
        this.reads = Map.copyOf(reads);
        this.base = Map.copyOf(base);
        this.versioned = Map.copyOf(versioned);
        this.readVersions = Map.copyOf(readVersions);
    }

    public static DocumentMappings of(StoreOptions options, Dialect dialect, TableNames names) {
        Map<Class<?>, DocumentMapping<?>> mappings = new LinkedHashMap<>();
        for (StoreOptions.DocumentType<?> type : options.documents().types()) {
            mappings.put(type.type(), DocumentMapping.of(type, dialect, names));
        }
        // a projection's documents need no separate registration
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            for (Class<?> type : registration.projection().documentTypes()) {
                mappings.computeIfAbsent(type, t -> DocumentMapping.of(new StoreOptions.DocumentType<>(t,
                        StoreOptions.requireIdentifier("document name of " + t.getName(),
                                t.getSimpleName().toLowerCase(Locale.ROOT)), null), dialect, names));
            }
        }
        Map<String, DocumentMapping<?>> versioned = new LinkedHashMap<>();
        Map<Class<?>, Integer> readVersions = new LinkedHashMap<>();
        for (Projection projection : options.projections().registrations().stream()
                .flatMap(registration -> registration.folding().stream()).toList()) {
            if (projection instanceof AggregateProjection<?, ?> aggregate && aggregate.version() > 1) {
                Class<?> type = aggregate.documentType();
                DocumentMapping<?> base = mappings.get(type);
                DocumentMapping<?> mapping = DocumentMapping.of(new StoreOptions.DocumentType<>(type,
                        StoreOptions.requireIdentifier("document name of " + type.getName() + " version "
                                + aggregate.version(), base.name() + "_v" + aggregate.version()), null),
                        dialect, names);
                versioned.put(key(type, aggregate.version()), mapping);
                readVersions.merge(type, aggregate.version(), Math::max);
            }
        }
        // the version before the one reads go to serves them until the new one caught up (VersionReads): its table
        // exists when that version ran here before, and is created empty otherwise
        readVersions.forEach((type, version) -> {
            if (version > 2) {
                versioned.computeIfAbsent(key(type, version - 1), k -> DocumentMapping.of(
                        new StoreOptions.DocumentType<>(type, mappings.get(type).name() + "_v" + (version - 1), null),
                        dialect, names));
            }
        });
        // documents Ferret serializes have the names their classes declare; an application's own serializer may rename
        boolean checkPaths = options.getSerializer() == null;
        mappings.values().forEach(mapping -> mapping.checkPaths(checkPaths));
        versioned.values().forEach(mapping -> mapping.checkPaths(checkPaths));
        // every table a projection writes can be rebuilt behind the one queries read
        for (ProjectionOptions.Registration registration : options.projections().registrations()) {
            for (Class<?> type : registration.projection().documentTypes()) {
                DocumentMapping<?> written = mappings.get(type);
                if (written.shadow() == null) {
                    written.addShadow(dialect, names);
                }
            }
        }
        versioned.values().forEach(mapping -> mapping.addShadow(dialect, names));
        requireDistinctTables(mappings.values(), versioned.values());
        Map<Class<?>, DocumentMapping<?>> reads = new LinkedHashMap<>(mappings);
        readVersions.forEach((type, version) -> reads.put(type, versioned.get(key(type, version))));
        for (StoreOptions.DocumentIndex index : options.documents().indexes()) {
            DocumentMapping<?> base = mappings.get(index.type());
            if (base == null) {
                throw new ConfigurationException("an index is declared for " + index.type().getName()
                        + ", which is neither a registered document type nor written by a projection");
            }
            // every version's table, so reads of whichever version is newest use it
            base.addIndex(index, dialect, names);
            versioned.values().stream().filter(m -> m.type() == index.type())
                    .forEach(m -> m.addIndex(index, dialect, names));
        }
        return new DocumentMappings(reads, mappings, versioned, readVersions);
    }

    /**
     * Refuses two uses of one table: a document named {@code order_rebuild} beside a projection's {@code order}, whose
     * rebuild replays into {@code pc_doc_order_rebuild}, would have its rows emptied and overwritten by that rebuild.
     *
     * @throws ConfigurationException naming the table and both uses
     */
    private static void requireDistinctTables(Collection<DocumentMapping<?>> base,
                                              Collection<DocumentMapping<?>> versioned) {
        Map<String, String> uses = new HashMap<>();
        for (DocumentMapping<?> mapping : base) {
            claim(uses, mapping.table().name(), "document " + mapping.type().getName() + " ('" + mapping.name() + "')");
        }
        for (DocumentMapping<?> mapping : versioned) {
            claim(uses, mapping.table().name(), "projection version table '" + mapping.name() + "' of "
                    + mapping.type().getName());
        }
        for (DocumentMapping<?> mapping : base) {
            if (mapping.shadow() != null) {
                claim(uses, mapping.shadow().table().name(), "the rebuild shadow of document "
                        + mapping.type().getName());
            }
        }
        for (DocumentMapping<?> mapping : versioned) {
            if (mapping.shadow() != null) {
                claim(uses, mapping.shadow().table().name(), "the rebuild shadow of '" + mapping.name() + "'");
            }
        }
    }

    private static void claim(Map<String, String> uses, String table, String use) {
        String earlier = uses.putIfAbsent(table.toLowerCase(Locale.ROOT), use);
        if (earlier != null) {
            throw new ConfigurationException("table " + table + " would hold both " + earlier + " and " + use
                    + "; give one of the documents another name (options.documents().register(type, name, id))");
        }
    }

    private static String key(Class<?> type, int version) {
        return type.getName() + "@" + version;
    }

    /** How many document types reads know. */
    public int size() {
        return reads.size();
    }

    /** Every table the document types and projection versions need. */
    public List<SchemaObject> tables() {
        List<SchemaObject> tables = new ArrayList<>();
        base.values().forEach(mapping -> tables.add(mapping.table()));
        versioned.values().forEach(mapping -> tables.add(mapping.table()));
        base.values().stream().filter(m -> m.shadow() != null).forEach(m -> tables.add(m.shadow().table()));
        versioned.values().stream().filter(m -> m.shadow() != null).forEach(m -> tables.add(m.shadow().table()));
        base.values().forEach(mapping -> tables.addAll(mapping.indexes()));
        versioned.values().forEach(mapping -> tables.addAll(mapping.indexes()));
        return tables;
    }

    /** The mapping reads and sessions use for {@code type}. */
    @SuppressWarnings("unchecked")
    public <T> DocumentMapping<T> mapping(Class<T> type) {
        Objects.requireNonNull(type, "document type");
        DocumentMapping<?> mapping = reads.get(type);
        if (mapping == null) {
            throw new FerretException("document type " + type.getName()
                    + " is not registered; add options.documents().register(" + type.getSimpleName() + ".class)");
        }
        return (DocumentMapping<T>) mapping;
    }

    /** The version reads of {@code type} go to once it caught up: 1 unless a projection version above writes it. */
    public int readVersion(Class<?> type) {
        return readVersions.getOrDefault(type, 1);
    }

    /**
     * The table of the version before {@link #readVersion}, which serves reads of {@code type} while the newest one
     * catches up; null when reads go to version 1.
     */
    public <T> DocumentMapping<T> priorVersion(Class<T> type) {
        int version = readVersion(type);
        return version <= 1 ? null : mapping(type, version - 1);
    }

    /** The mapping one version of a projection writes: the base table for 1, a table of its own above. */
    @SuppressWarnings("unchecked")
    public <T> DocumentMapping<T> mapping(Class<T> type, int version) {
        if (version <= 1) {
            DocumentMapping<?> mapping = base.get(type);
            return mapping == null ? mapping(type) : (DocumentMapping<T>) mapping;
        }
        return (DocumentMapping<T>) versioned.get(key(type, version));
    }
}
