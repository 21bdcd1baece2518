package dev.ferret.runtime.projections;

import dev.ferret.EventEnvelope;
import dev.ferret.EventMetadata;
import dev.ferret.IdLimits;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.SideEffects;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.documents.DocumentChanges.Key;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.subscriptions.PostCommitListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The documents one page reads and writes, over the page's transaction. Reads see the page's own pending writes
 * first; committed state is read at most once per document. Owned by the thread applying the page.
 *
 * <p>An applier brackets each event with {@link #beginEvent} and {@link #keepEvent} or {@link #discardEvent}: an
 * event whose apply throws leaves nothing behind (no document write, side effect or post-commit listener), so a
 * dead letter never commits with part of its event, and later events of the page read only kept events' writes.
 */
public final class PageBatch {

    private final StoreContext context;
    private final Connection connection;
    private final TenantDatabases.Database database;
    private final DocumentChanges changes;
    /** Committed state read so far: the document, or null when it did not exist. */
    private final Map<Key, Object> committed = new HashMap<>();
    private final Map<String, Operations> operationsByTenant = new HashMap<>();
    private final List<PostCommitListener> postCommit = new ArrayList<>();
    private final List<PublishedMessage> messages = new ArrayList<>();
    private final List<RaisedEvent> raisedEvents = new ArrayList<>();

    /** Where the event being applied began in each list; -1 outside an event. */
    private int postCommitMark = -1;
    private int messagesMark = -1;
    private int raisedEventsMark = -1;
    /** Documents the event being applied read from committed state: it may have changed those instances in place. */
    private final List<Key> readCommittedInEvent = new ArrayList<>();
    /** Whether the event being applied read a document an earlier event of the page wrote. */
    private boolean readPendingInEvent;
    /** Whether the unit of work had no writes before the page, so that {@link #restart} can go back to it. */
    private final boolean startedEmpty;
    /** Snapshots the shard committed in its previous pages, or null when the page reads everything back. */
    private ShardDocumentCache cache;
    /** Set by {@link #insertingWhatIsMissing}. */
    private boolean insertsMissing;
    /** While set, {@link #restart} is left to the composite applying the page: it would drop other members' work. */
    private boolean restartsLeftToComposite;

    /**
     * An event a projection raised, appended in the page's transaction, with {@code metadata} naming the event that
     * raised it as its cause and carrying that event's correlation id and headers.
     */
    public record RaisedEvent(String tenantId, String streamId, Object event, EventMetadata metadata) {
    }

    /** The {@link RaisedEvent#event()} of a stream a projection archives rather than appends to. */
    public record ArchiveStream() {
    }

    /** A message a projection published while applying the event at {@code sequence}, for the page's outbox rows. */
    public record PublishedMessage(String tenantId, long sequence, Object message) {
    }

    /** Side effects raised while applying {@code cause}; held until the page writes them in its transaction. */
    public SideEffects sideEffects(EventEnvelope cause) {
        String tenantId = cause.tenantId();
        long sequence = cause.sequence();
        return new SideEffects() {
            @Override
            public void publish(Object message) {
                messages.add(new PublishedMessage(tenantId, sequence, Objects.requireNonNull(message, "message")));
            }

            @Override
            public void appendEvent(String streamId, Object event) {
                raisedEvents.add(new RaisedEvent(tenantId, streamId, Objects.requireNonNull(event, "event"),
                        cause.metadata().withCausationId(cause.eventId().toString())));
            }

            @Override
            public void archiveStream(String streamId) {
                raisedEvents.add(new RaisedEvent(tenantId, IdLimits.requireStreamId(streamId), new ArchiveStream(),
                        cause.metadata().withCausationId(cause.eventId().toString())));
            }
        };
    }

    /** Starts applying one event: what it writes, raises and registers from here on can still be taken back. */
    public void beginEvent() {
        changes.beginUndo();
        postCommitMark = postCommit.size();
        messagesMark = messages.size();
        raisedEventsMark = raisedEvents.size();
        readCommittedInEvent.clear();
        readPendingInEvent = false;
    }

    /** The event applied: keeps everything it did since {@link #beginEvent}. */
    public void keepEvent() {
        changes.endUndo();
        endEvent();
    }

    /**
     * The event's apply threw: takes back everything it did since {@link #beginEvent}. Committed documents it read
     * are read again, as it may have changed those instances before it threw. Returns whether it was handed
     * documents that earlier events of the page wrote: it may have changed those in place too, and only applying
     * the page again from its start ({@link #restart}) restores them.
     */
    public boolean discardEvent() throws SQLException {
        boolean readPending = readPendingInEvent;
        changes.undo();
        if (postCommitMark >= 0) {
            postCommit.subList(postCommitMark, postCommit.size()).clear();
            messages.subList(messagesMark, messages.size()).clear();
            raisedEvents.subList(raisedEventsMark, raisedEvents.size()).clear();
        }
        Set<Key> reread = new LinkedHashSet<>(readCommittedInEvent);
        endEvent();
        for (Key key : reread) {
            committed.remove(key);
            if (cache != null) {
                cache.forget(key);
            }
            current(key);
        }
        return readPending;
    }

    private void endEvent() {
        postCommitMark = -1;
        messagesMark = -1;
        raisedEventsMark = -1;
        readCommittedInEvent.clear();
        readPendingInEvent = false;
    }

    /**
     * Forgets everything applied to this page, to apply it again from its start. Committed documents are read
     * afresh: instances read before may have been changed in place. Only for a page that began with no writes (a
     * daemon page); an inline session's own writes would be lost.
     */
    public void restart() {
        if (restartsLeftToComposite) {
            throw new RestartRequested();
        }
        if (!startedEmpty) {
            throw new IllegalStateException("the page cannot be applied again: its unit of work had "
                    + "writes of its own before the page, and going back would lose them");
        }
        endEvent();
        changes.clear();
        committed.clear();
        if (cache != null) {
            cache.forgetAll();
        }
        postCommit.clear();
        messages.clear();
        raisedEvents.clear();
    }

    /** From here on, until called with false, {@link #restart} throws {@link RestartRequested} instead. */
    void leaveRestartsToComposite(boolean leave) {
        this.restartsLeftToComposite = leave;
    }

    /**
     * The document as the page found it, as a fresh instance: read again from the database, or, when the unit of
     * work had a pending write for it before (an inline session's own store), that write. Null when it does not
     * exist. For an applier rebuilding a document that an event changed in place before it threw.
     */
    public Object reread(Key key) throws SQLException {
        if (changes.isPending(key)) {
            return changes.pending(key);
        }
        committed.remove(key);
        if (cache != null) {
            cache.forget(key);
        }
        preload(key.mapping(), key.tenantId(), List.of(key.id()));
        return committed.get(key);
    }

    public List<PublishedMessage> publishedMessages() {
        return List.copyOf(messages);
    }

    public List<RaisedEvent> raisedEvents() {
        return List.copyOf(raisedEvents);
    }

    /** {@code database}: where the page's transaction runs, so that writes for tenants living elsewhere are refused. */
    public PageBatch(StoreContext context, Connection connection, DocumentChanges changes,
                     TenantDatabases.Database database) {
        this.context = context;
        this.connection = connection;
        this.changes = changes;
        this.database = database;
        this.startedEmpty = changes.isEmpty();
    }

    /**
     * Reads and writes {@code mappings} in their shadow tables: the page is a rebuild's replay, which queries do not
     * see until its swap. Every other table (another projection's documents an event projection loads) stays live.
     * {@code empty}: the shadows hold no row (the replay's first page): documents are not read, all are new.
     */
    public PageBatch replayingIntoShadows(Set<DocumentMapping<?>> mappings, boolean empty) {
        changes.writeToShadows(mappings, empty);
        return this;
    }

    /**
     * The page's shard is the only writer of its documents (a snapshot whose tables no other projection writes): a
     * document it reads and finds missing is stored by inserting ({@link DocumentChanges#markNew}).
     */
    public PageBatch insertingWhatIsMissing() {
        this.insertsMissing = true;
        return this;
    }

    /**
     * Reads committed snapshots from {@code cache} before the database, for a shard that is their only writer. The
     * caller has begun the page on it ({@link ShardDocumentCache#beginPage}).
     */
    public PageBatch readingThrough(ShardDocumentCache cache) {
        this.cache = cache;
        return this;
    }

    /** The database the page's transaction runs in. */
    public TenantDatabases.Database database() {
        return database;
    }

    /** Registers work for after the page's commit. */
    public void afterCommit(PostCommitListener listener) {
        if (listener != null && listener != PostCommitListener.NONE) {
            postCommit.add(listener);
        }
    }

    public List<PostCommitListener> postCommitListeners() {
        return List.copyOf(postCommit);
    }

    public DocumentChanges changes() {
        return changes;
    }

    public DocumentOperations operations(String tenantId) {
        return operationsByTenant.computeIfAbsent(tenantId, Operations::new);
    }

    /** The document's current state in this page, or null when it does not exist (or was deleted in it). */
    public Object current(Key key) throws SQLException {
        if (changes.isPending(key)) {
            readPendingInEvent |= postCommitMark >= 0;
            return changes.pending(key);
        }
        if (!committed.containsKey(key)) {
            preload(key.mapping(), key.tenantId(), List.of(key.id()));
        }
        Object document = committed.get(key);
        if (document != null && postCommitMark >= 0) {
            readCommittedInEvent.add(key);
        }
        return document;
    }

    /** Reads the committed state of many documents in one statement, skipping those already known. */
    public void preload(DocumentMapping<?> mapping, String tenantId, Collection<String> ids) throws SQLException {
        List<String> unknown = new ArrayList<>();
        for (String id : ids) {
            Key key = new Key(mapping, tenantId, id);
            if (!committed.containsKey(key) && !changes.isPending(key)) {
                // one lookup: the store's cache may drop the entry between two
                String cached = cache == null ? null : cache.lookup(key);
                if (cached != null) {
                    if (ShardDocumentCache.isAbsent(cached)) {
                        committed.put(key, null);
                        foundMissing(key);
                    } else {
                        committed.put(key, context.serializer().fromJson(cached, mapping.type()));
                    }
                    continue;
                }
                committed.put(key, null);
                unknown.add(id);
            }
        }
        if (unknown.isEmpty() || changes.writesToEmptyShadow(mapping)) {
            return;
        }
        try (PreparedStatement ps = connection.prepareStatement(changes.sqlOf(mapping).loadMany())) {
            for (int from = 0; from < unknown.size(); from += DocumentChanges.MAX_ARRAY_PARAMETER) {
                ps.setString(1, tenantId);
                context.dialect().bindIds(connection, ps, 2,
                        unknown.subList(from, Math.min(unknown.size(), from + DocumentChanges.MAX_ARRAY_PARAMETER)));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Object document = context.serializer().fromJson(rs.getString(1), mapping.type());
                        committed.put(new Key(mapping, tenantId, mapping.idOf(document)), document);
                    }
                }
            }
        }
        if (insertsMissing) {
            for (String id : unknown) {
                Key key = new Key(mapping, tenantId, id);
                if (committed.get(key) == null) {
                    foundMissing(key);
                }
            }
        }
    }

    private void foundMissing(Key key) {
        if (insertsMissing) {
            changes.markNew(key);
        }
    }

    /** What this page wrote, per tenant, for the async listeners. */
    public List<ChangeSet> changeSets(String shardName) {
        Map<String, List<Object>> inserted = new LinkedHashMap<>();
        Map<String, List<Object>> updated = new LinkedHashMap<>();
        Map<String, List<ChangeSet.DeletedDocument>> deleted = new LinkedHashMap<>();
        Set<String> tenants = new HashSet<>();
        changes.forEach((key, document) -> {
            tenants.add(key.tenantId());
            if (document == null) {
                deleted.computeIfAbsent(key.tenantId(), t -> new ArrayList<>())
                        .add(new ChangeSet.DeletedDocument(key.mapping().type(), key.id()));
            } else if (committed.containsKey(key) && committed.get(key) == null) {
                inserted.computeIfAbsent(key.tenantId(), t -> new ArrayList<>()).add(document);
            } else {
                updated.computeIfAbsent(key.tenantId(), t -> new ArrayList<>()).add(document);
            }
        });
        List<ChangeSet> sets = new ArrayList<>();
        for (String tenant : tenants) {
            sets.add(new ChangeSet(shardName, tenant, List.copyOf(inserted.getOrDefault(tenant, List.of())),
                    List.copyOf(updated.getOrDefault(tenant, List.of())),
                    List.copyOf(deleted.getOrDefault(tenant, List.of()))));
        }
        return sets;
    }

    private final class Operations implements DocumentOperations {

        private final String tenantId;

        Operations(String tenantId) {
            this.tenantId = tenantId;
        }

        @Override
        public String tenantId() {
            return tenantId;
        }

        @Override
        public <T> Optional<T> load(Class<T> type, Object id) {
            DocumentMapping<T> mapping = context.mapping(type);
            try {
                return Optional.ofNullable(type.cast(current(new Key(mapping, tenantId, mapping.idFrom(id)))));
            } catch (SQLException e) {
                throw new PageReadException(e);
            }
        }

        @Override
        public void store(Object document) {
            DocumentMapping<?> mapping = context.mapping(document.getClass());
            changes.store(new Key(mapping, tenantId, mapping.idOf(document)), document);
        }

        @Override
        public void delete(Class<?> type, Object id) {
            DocumentMapping<?> mapping = context.mapping(type);
            changes.delete(new Key(mapping, tenantId, mapping.idFrom(id)));
        }
    }

    /** A member of a composite asked to apply the page again from its start; the composite does, for all members. */
    static final class RestartRequested extends RuntimeException {

        private static final long serialVersionUID = 1L;

        RestartRequested() {
            super("a member of a composite asked to apply the page again from its start", null, false, false);
        }
    }

    /** A database read failed inside projection code; carries the SQLException out to the page's retry logic. */
    public static final class PageReadException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        PageReadException(SQLException cause) {
            super(cause);
        }

        @Override
        public synchronized SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }
}
