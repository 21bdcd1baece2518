package dev.ferret.runtime.daemon;

import dev.ferret.FerretException;
import dev.ferret.daemon.ApplyFailedException;
import dev.ferret.daemon.ChangeSet;
import dev.ferret.daemon.ProgressionConflictException;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.documents.DocumentChanges;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.PageBatch;
import dev.ferret.runtime.projections.ShardDocumentCache;
import dev.ferret.runtime.projections.ProjectionApplier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongPredicate;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one shard's pages: applies the page's events in a transaction, writes its documents, its dead letters, its
 * side effects (outbox rows and raised events, unless silent or warming up) and last its progression, and honours a
 * drain up to the commit. Immutable; called only by the shard's one loop run in flight.
 */
final class PageWriter {

    private static final Logger LOG = LoggerFactory.getLogger(PageWriter.class);

    /** The agent's side of a page in flight: the connection to abort on a drain, and whether one asked. */
    interface InFlight {

        /** The page's connection, for a drain to abort; the writer never clears it (the commit does). */
        void connected(Connection connection);

        /** Whether the shard was asked to stop: a subscription's page may end early. */
        boolean stopping();

        /** Whether the drain cancelled this run: the page must not commit. */
        boolean cancelledByDrain();
    }

    private static final long NO_DEAD_LETTER = -1;

    /** A replay's side of the drain: the loop is stopped, so nothing cancels it. */
    private static final InFlight NOT_IN_FLIGHT = new InFlight() {
        @Override
        public void connected(Connection connection) {
        }

        @Override
        public boolean stopping() {
            return false;
        }

        @Override
        public boolean cancelledByDrain() {
            return false;
        }
    };

    private final String name;
    private final ProjectionApplier applier;
    private final LogPartition partition;
    private final ShardParts parts;
    private final StoreContext context;
    private final DataSource dataSource;
    private final ProgressionRows progression;
    private final ShardOutbox outbox;
    private final PageListeners listeners;
    private final boolean skipApplyErrors;
    /** Run first in each page's transaction; empty when page commits wait for durability. */
    private final String asyncCommit;
    /** Where pages without side effects commit together with other shards' of the database. */
    private final SharedWrites shared;
    /** The database's bound on concurrent page writes, held while a connection of this shard's is in use. */
    private final DatabaseLimits limits;
    /** The snapshots this shard committed, kept between its pages; null unless it is their only writer. */
    private final ShardDocumentCache snapshots;

    PageWriter(String name, ProjectionApplier applier, LogPartition partition, ShardParts parts, ShardOutbox outbox,
               PageListeners listeners) {
        this.name = name;
        this.applier = applier;
        this.partition = partition;
        this.parts = parts;
        this.context = parts.context();
        this.dataSource = partition.database().dataSource();
        this.progression = parts.progression();
        this.outbox = outbox;
        this.listeners = listeners;
        this.skipApplyErrors = parts.settings().isSkipApplyErrors();
        this.asyncCommit = parts.settings().isAsyncPageCommits() ? context.dialect().asyncCommit() : "";
        this.shared = parts.writes();
        this.limits = parts.limits();
        int cacheSize = parts.settings().getDocumentCacheSize();
        this.snapshots = applier.ownsItsDocuments() && cacheSize > 0 && parts.snapshots().enabled()
                ? new ShardDocumentCache(parts.snapshots(), cacheSize) : null;
    }

    /** The shard is (re)starting, on the thread that starts it: its next page reads its snapshots back. */
    void restarted() {
        if (snapshots != null) {
            snapshots.restarted();
        }
    }

    /** The page of {@code outcome} committed: its writes are the table's state for the next page to start from. */
    void committed(PageOutcome outcome) {
        if (snapshots != null && outcome.batch() != null && outcome.attempt().shadow() == null) {
            snapshots.pageCommitted(outcome.attempt().end(), outcome.batch().changes());
        }
    }

    /**
     * Writes {@code page} in one transaction: its documents, dead letters and side effects, then its progression
     * from the page's floor; returns what the transaction did. A failure after the work returned (the commit's)
     * is thrown as {@link PageOutcome.CommitUnknown}, carrying the outcome. {@code inFlight} is the agent's side of
     * the drain.
     */
    PageOutcome write(LoadedPage page, PageAttempt attempt, InFlight inFlight) throws SQLException {
        return write(page, attempt, inFlight, NO_DEAD_LETTER);
    }

    /**
     * As {@link #write(LoadedPage, PageAttempt, InFlight)}, and the event at {@code skipOnce} (an operator skipped
     * it) goes to the dead letters if it fails, whatever the policy.
     */
    PageOutcome write(LoadedPage page, PageAttempt attempt, InFlight inFlight, long skipOnce) throws SQLException {
        LongPredicate skip = skipApplyErrors ? sequence -> true : sequence -> sequence == skipOnce;
        return write(page, attempt, inFlight, skip, NO_DEAD_LETTER);
    }

    /**
     * Applies the one event of {@code page} again for the dead letter {@code deadLetterId}, with its documents and
     * side effects, deleting the dead letter in the same transaction; the progression stays. Called with the shard's
     * page loop stopped; a failure to apply throws and leaves the dead letter.
     */
    PageOutcome replay(LoadedPage page, PageAttempt attempt, long deadLetterId) throws SQLException {
        return write(page, attempt, NOT_IN_FLIGHT, sequence -> false, deadLetterId);
    }

    private PageOutcome write(LoadedPage page, PageAttempt attempt, InFlight inFlight, LongPredicate skip,
                              long deadLetterId) throws SQLException {
        // a replay behind the live tables writes alone: its row and tables are not the ones a group expects
        if (shared.enabled() && deadLetterId == NO_DEAD_LETTER && applier.sharesTransactions()
                && attempt.shadow() == null) {
            return writeShared(page, attempt, inFlight, skip);
        }
        return writeAlone(page, attempt, inFlight, deadLetterId, null,
                c -> apply(c, page, skip, inFlight, deadLetterId != NO_DEAD_LETTER, attempt));
    }

    /**
     * Applies the page outside a transaction (the shard is its documents' only writer, so what it reads back is what
     * it committed) and, when it has no side effects to write, writes it with the other pages of its database that
     * are ready at the same moment (see {@link SharedWrites}); else, or when the group could not take it, in a
     * transaction of its own.
     */
    private PageOutcome writeShared(LoadedPage page, PageAttempt attempt, InFlight inFlight, LongPredicate skip)
            throws SQLException {
        Applied applied = limits.writing(partition.database(), () -> {
            try (Connection read = dataSource.getConnection()) {
                try {
                    return apply(read, page, skip, inFlight, false, attempt);
                } finally {
                    // before the connection goes back to the pool: a drain's abort must never reach it there
                    inFlight.connected(null);
                }
            }
        });
        boolean sideEffects = !attempt.silent() && !attempt.warmingUp()
                && (!applied.batch().publishedMessages().isEmpty() || !applied.batch().raisedEvents().isEmpty());
        if (sideEffects) {
            return writeAlone(page, attempt, inFlight, NO_DEAD_LETTER, applied, null);
        }
        PageOutcome[] reached = new PageOutcome[1];
        List<Runnable> afterTransaction = new ArrayList<>();
        SharedWrites.Outcome outcome = shared.write(partition.database(), new SharedWrites.Member() {
            @Override
            public void write(Connection connection) throws SQLException {
                reached[0] = null;
                reached[0] = writeApplied(connection, page, attempt, applied, afterTransaction, inFlight,
                        NO_DEAD_LETTER);
            }

            @Override
            public boolean cancelled() {
                return inFlight.cancelledByDrain();
            }
        });
        return switch (outcome.verdict()) {
            case COMMITTED -> reached[0];
            case UNKNOWN -> throw new PageOutcome.CommitUnknown(reached[0], outcome.cause());
            case CANCELLED -> throw new SQLException("shard " + name + " was cancelled before its shared transaction"
                    + " committed", outcome.cause());
            case ALONE -> writeAlone(page, attempt, inFlight, NO_DEAD_LETTER, applied, null);
        };
    }

    /**
     * Writes the page in a transaction of its own: {@code applied} when the page was applied already, else applied
     * in the transaction by {@code applying}. A failure after the work returned is thrown as
     * {@link PageOutcome.CommitUnknown}.
     */
    private PageOutcome writeAlone(LoadedPage page, PageAttempt attempt, InFlight inFlight, long deadLetterId,
                                   Applied applied, TransactionRunner.Work<Applied> applying) throws SQLException {
        // what the appends of raised events leave to do once the transaction ended (the append fence's release)
        List<Runnable> afterTransaction = new ArrayList<>();
        // set when the work returned: a failure after it may hide a commit
        PageOutcome[] reached = new PageOutcome[1];
        try {
            return limits.writing(partition.database(), () -> context.transactions().inTransaction(dataSource, c -> {
                reached[0] = null;
                inFlight.connected(c);
                Applied work = applied != null ? applied : applying.run(c);
                reached[0] = writeApplied(c, page, attempt, work, afterTransaction, inFlight, deadLetterId);
                return reached[0];
            }));
        } catch (SQLException | RuntimeException e) {
            if (reached[0] == null || e instanceof ProgressionConflictException) {
                throw e;
            }
            throw new PageOutcome.CommitUnknown(reached[0], e);
        } finally {
            afterTransaction.forEach(Runnable::run);
        }
    }

    /** A page applied and not yet written: its batch, its dead letters and its listeners' change sets. */
    private record Applied(PageBatch batch, List<DeadLetter> deadLetters, List<ChangeSet> changeSets) {
    }

    /** Applies the page's events on {@code c}: documents read back through it, nothing written yet. */
    private Applied apply(Connection c, LoadedPage page, LongPredicate skip, InFlight inFlight, boolean replaying,
                          PageAttempt attempt) throws SQLException {
        boolean silent = attempt.silent();
        // built inside: a transaction runner that re-runs the work must not collect them twice
        List<DeadLetter> deadLetters = new ArrayList<>();
        // one row per (shard, event), however many documents the failing event was routed to
        Set<Long> deadSequences = new HashSet<>();
        for (DeadLetter unreadable : page.unreadable()) {
            if (!skip.test(unreadable.sequence())) {
                throw applyFailed(page, unreadable.sequence(), unreadable.typeName(), unreadable.streamId(),
                        unreadable.error());
            }
            LOG.warn("Shard {} sends {} at sequence {} of stream '{}' to the dead letters: it cannot be read ({})",
                    name, unreadable.typeName(), unreadable.sequence(), unreadable.streamId(),
                    unreadable.error().toString());
            deadLetters.add(unreadable);
        }
        inFlight.connected(c);
        if (inFlight.cancelledByDrain()) {
            throw new SQLException("shard " + name + " was cancelled before its page wrote");
        }
        PageBatch batch = new PageBatch(context, c, new DocumentChanges(), partition.database());
        if (attempt.shadow() != null) {
            // the replay's row is at zero until its first page commits, and the shadows are emptied with it set there;
            // a document type another projection writes too shares its shadow, which that one's replay may fill
            batch.replayingIntoShadows(attempt.shadow().shadowed(), page.floor() == 0 && applier.ownsItsDocuments());
        }
        // a replayed event is out of the shard's order: it reads and writes past the cache, which the restart
        // after it drops; the cache holds the live tables' documents, not a rebuild's shadows
        if (applier.ownsItsDocuments()) {
            batch.insertingWhatIsMissing();
        }
        if (snapshots != null && !replaying && attempt.shadow() == null) {
            snapshots.beginPage(page.floor());
            batch.readingThrough(snapshots);
        }
        try {
            applier.applyPage(page.floor(), page.end(), page.events(), batch, (event, e) -> {
                if (!skip.test(event.sequence())) {
                    throw applyFailed(page, event.sequence(), event.typeName(), event.streamId(), e);
                }
                if (!deadSequences.add(event.sequence())) {
                    return;
                }
                LOG.warn("Shard {} sends {} at sequence {} of stream '{}' to the dead letters: {}", name,
                        event.typeName(), event.sequence(), event.streamId(), e.toString());
                deadLetters.add(new DeadLetter(event.sequence(), event.eventId(), event.typeName(),
                        event.streamId(), event.tenantId(), e));
            }, name, () -> inFlight.stopping() || Thread.currentThread().isInterrupted());
        } catch (PageBatch.PageReadException e) {
            throw e.getCause();
        } catch (SQLException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new FerretException("shard " + name + " failed on the page (" + page.floor() + ", "
                    + page.end() + "]: " + e, e);
        }
        return new Applied(batch, deadLetters, listeners.beforeCommit(batch, silent));
    }

    /**
     * Writes an applied page on {@code c}, in the transaction that commits it: documents, dead letters, side effects
     * (unless silent or warming up), then the progression from the page's floor (or, for a replayed dead letter, the
     * dead letter's removal); honours a drain up to the last moment.
     */
    private PageOutcome writeApplied(Connection c, LoadedPage page, PageAttempt attempt, Applied applied,
                                     List<Runnable> afterTransaction, InFlight inFlight, long deadLetterId)
            throws SQLException {
        boolean silent = attempt.silent();
        OffsetDateTime now = attempt.stamp();
        PageBatch batch = applied.batch();
        Map<UUID, Object> outboxWritten = Map.of();
        boolean appendedEvents = false;
        try {
            batch.changes().write(c, context.dialect(), context.serializer(), now);
        } catch (SQLException e) {
            if (deadLetterId == NO_DEAD_LETTER && batch.changes().insertsNewDocuments()
                    && context.dialect().isUniqueViolation(e)
                    && rowLeft(attempt.row(name), page.floor(), page.floor() > 0 || attempt.shadow() != null)) {
                // a document this page found missing (or a row in a shadow emptied at the replay's start) is there,
                // and the shard's row moved: another run of this shard (a node that lost the lock and has not
                // noticed) committed this page first
                throw new ProgressionConflictException(name, page.floor());
            }
            throw e;
        }
        DeadLetter.insert(c, parts, name, applied.deadLetters(), now);
        if (!silent && !attempt.warmingUp()) {
            // side effects commit with the page or not at all; a rebuild and a gated warm-up write none
            outboxWritten = outbox.write(c, batch.publishedMessages(), now);
            List<PageBatch.RaisedEvent> raised = batch.raisedEvents();
            if (!raised.isEmpty()) {
                // last before the progression: the tenant's sequence row stays locked only until the commit
                parts.sessions().appendWithin(c, raised, now, afterTransaction);
                appendedEvents = true;
            }
        }
        // a commit's durability is read when it commits: the engine's SET LOCAL rides with the progression write. A
        // page that raised events waits for the flush: lost, the numbers it drew could be handed out again below
        // marks this node has already passed
        if (deadLetterId != NO_DEAD_LETTER) {
            if (!asyncCommit.isEmpty() && !appendedEvents) {
                try (PreparedStatement statement = c.prepareStatement(asyncCommit)) {
                    statement.execute();
                }
            }
            if (!DeadLetterRows.delete(c, parts, name, deadLetterId)) {
                throw new IllegalStateException("dead letter " + deadLetterId + " of shard " + name
                        + " was replayed or discarded meanwhile; nothing was applied");
            }
        } else if (!progression.advance(c, attempt.row(name), page.floor(), page.end(), now,
                appendedEvents ? "" : asyncCommit)) {
            throw new ProgressionConflictException(name, page.floor());
        }
        if (inFlight.cancelledByDrain()) {
            // the last moment to honour the drain: an engine whose abort is a no-op would commit otherwise
            throw new SQLException("shard " + name + " was cancelled at the drain bound before its page committed");
        }
        return new PageOutcome(attempt, batch, applied.changeSets(), outboxWritten, appendedEvents, page.events(),
                applied.deadLetters().size());
    }

    /**
     * Whether progression row {@code row} is no longer at {@code floor}, or gone where it {@code existed} when the
     * page began (a live shard's first page may have none yet; a replay's row is there from zero): read on a
     * connection of its own.
     */
    private boolean rowLeft(String row, long floor, boolean existed) {
        try {
            OptionalLong now = progression.find(dataSource, row);
            return now.isEmpty() ? existed : now.getAsLong() != floor;
        } catch (SQLException e) {
            // unknown: the page's own failure stands
            return false;
        }
    }

    /** Names the store-wide sequence and, for a tenant's shard, the tenant's own number its progression counts. */
    private ApplyFailedException applyFailed(LoadedPage page, long sequence, String type, String stream,
                                             Throwable cause) {
        Long tenantNumber = page.tenantNumbers().get(sequence);
        return tenantNumber == null ? new ApplyFailedException(name, sequence, type, stream, cause)
                : new ApplyFailedException(name, sequence, type, stream, partition.tenantId(), tenantNumber, cause);
    }
}
