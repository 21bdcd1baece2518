package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.documents.ShadowTable;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.projections.ProjectionApplier;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's rebuild behind its live tables: the replay writes the {@link ShadowTable}s of the shard's documents and
 * a progression row of its own, while queries read the live tables and the live row stays where the last live page
 * left it; when the replay reaches its target, {@link #swap} replaces the live rows with the shadow's and moves the
 * live row to the replay's, in one transaction. A crash before the swap leaves the live read model as it was and the
 * replay's row behind, from which the shard's next start resumes the replay.
 *
 * <p>Its bounds ({@link #replaying}, the target, the silent bound) are written by the agent's rebuild with the loop
 * stopped, or by the one loop run in flight (a resume, the swap), and published through volatiles for status and
 * waiters; its statements run on the shard's loop (the swap) or with the loop stopped (the preparation).
 */
final class ShadowReplay {

    private static final Logger LOG = LoggerFactory.getLogger(ShadowReplay.class);

    /** Appended to a shard's name for its replay's progression row. */
    static final String ROW_SUFFIX = "~rebuild";

    private final String shard;
    private final String row;
    private final LogPartition partition;
    private final StoreContext context;
    private final ProgressionRows progression;
    private final List<DocumentMapping<?>> mappings;
    private final Set<DocumentMapping<?>> shadowed;
    private final TransactionRunner transactions;
    private final TimeSource time;
    /**
     * Whether the pages go to the shadow tables and the replay's row: from a rebuild's start (or a start that found
     * an unfinished replay) until the swap; the loop's floor is then the replay's, the live row stays at
     * {@link #silentUntil}.
     */
    private volatile boolean replaying;
    /** The progression at which the replay swaps in. */
    private volatile long target = Long.MAX_VALUE;
    /** What the run before the rebuild had committed: only pages below it replay silently (their effects exist). */
    private volatile long silentUntil;

    ShadowReplay(String shard, ProjectionApplier applier, LogPartition partition, ShardParts parts) {
        this.shard = shard;
        this.row = rowOf(shard);
        this.partition = partition;
        this.context = parts.context();
        this.progression = parts.progression();
        this.mappings = applier.documentMappings(context).stream().filter(m -> m.shadow() != null).toList();
        this.shadowed = new LinkedHashSet<>(mappings);
        this.transactions = context.transactions();
        this.time = parts.time();
    }

    /** A replay starts (or resumes) towards {@code target}, silent below {@code silentUntil}. */
    void begin(long target, long silentUntil) {
        this.target = target;
        this.silentUntil = silentUntil;
        this.replaying = true;
    }

    boolean replaying() {
        return replaying;
    }

    /** Whether the replay's floor has reached its target: the swap is due. */
    boolean reached(long floor) {
        return replaying && floor >= target;
    }

    /** What queries can rely on: the loop's floor, but where the live tables stand while a replay runs. */
    long visibleFloor(long floor) {
        return replaying ? silentUntil : floor;
    }

    /** Whether a page from {@code floor} replays events whose effects the run before published: no side effects. */
    boolean silent(long floor) {
        return replaying && floor < silentUntil;
    }

    /** A page's bound: a silent page never reaches events the run before had not published. */
    long upperBound(long from, long mark) {
        return replaying && from < silentUntil ? Math.min(mark, silentUntil) : mark;
    }

    /**
     * The replay's row at a restart while replaying; empty, and no longer replaying, when it is gone (another node
     * that held the shard meanwhile swapped the replay in).
     */
    OptionalLong rowAtRestart(DataSource database) throws SQLException {
        OptionalLong row = unfinished(database);
        if (row.isEmpty()) {
            replaying = false;
        }
        return row;
    }

    /**
     * {@link #swap} in a transaction of its own, logged with its duration; the replay has ended, whether this call or
     * an earlier one whose commit reply was lost swapped.
     */
    Void swapIn(DataSource database, long floor, OffsetDateTime now) throws SQLException {
        long started = time.nanoTime();
        boolean swapped = transactions.inTransaction(database, c -> swap(c, floor, now));
        replaying = false;
        if (swapped) {
            LOG.info("Shard {} swapped in its rebuild at {} in {} ms: queries read the rebuilt documents, and it runs"
                    + " live from here", shard, floor, Duration.ofNanos(time.nanoTime() - started).toMillis());
        } else {
            LOG.info("Shard {}'s swap at {} had committed although its commit reported a failure; it runs live",
                    shard, floor);
        }
        return null;
    }

    /**
     * The replay's progression row: the shard's name and {@link #ROW_SUFFIX}; a name too long for that keeps its
     * start and a digest of the whole, so that two shards never share a row.
     */
    static String rowOf(String shard) {
        int limit = Dialect.MAX_SHARD_NAME_LENGTH;
        if (shard.length() + ROW_SUFFIX.length() <= limit) {
            return shard + ROW_SUFFIX;
        }
        String digest = digest(shard);
        return shard.substring(0, limit - ROW_SUFFIX.length() - digest.length() - 1) + "~" + digest + ROW_SUFFIX;
    }

    private static String digest(String text) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    String row() {
        return row;
    }

    /** The tables the replay reads and writes in their shadows. */
    Set<DocumentMapping<?>> shadowed() {
        return shadowed;
    }

    /** The replay's row, when a replay of this shard is under way (or was, on a node that stopped). */
    OptionalLong unfinished(DataSource database) throws SQLException {
        return progression.find(database, row);
    }

    /**
     * Empties the shadows (the tenant's rows) and sets the replay's row to zero, on {@code c}: a replay from zero
     * follows. The row exists from here until the swap, so a start that finds it knows a replay is unfinished.
     */
    void prepare(Connection c, OffsetDateTime now) throws SQLException {
        for (DocumentMapping<?> mapping : mappings) {
            execute(c, mapping.shadow().sql().deleteTenant(), mapping.shadow().sql().deleteAll());
        }
        progression.delete(c, row);
        progression.raise(c, row, 0, now);
    }

    /**
     * Puts the replay's result live, on {@code c} inside the caller's transaction: the replay's row is deleted, the
     * live rows are replaced by the shadow's and the live row set to {@code floor}; the shadows are emptied after the
     * commit ({@link #emptyShadowsAfterSwap}), outside the transaction that holds the live rows' locks. Returns false,
     * having changed nothing, when the replay's row is gone: an earlier swap committed (its reply may have been lost),
     * and doing it again would copy an empty shadow over the rebuilt documents.
     */
    private boolean swap(Connection c, long floor, OffsetDateTime now) throws SQLException {
        if (!progression.delete(c, row)) {
            return false;
        }
        for (DocumentMapping<?> mapping : mappings) {
            ShadowTable shadow = mapping.shadow();
            execute(c, mapping.sql().deleteTenant(), mapping.sql().deleteAll());
            execute(c, shadow.copyTenant(), shadow.copyAll());
        }
        progression.delete(c, shard);
        progression.raise(c, shard, floor, now);
        return true;
    }

    /**
     * Empties the shadows (the tenant's rows) after a swap, in a transaction of its own: no reader reads them, and a
     * node that stops before this leaves them to the next rebuild's {@link #prepare}, which empties them first.
     */
    void emptyShadowsAfterSwap(DataSource database) {
        try {
            transactions.inTransaction(database, c -> {
                for (DocumentMapping<?> mapping : mappings) {
                    execute(c, mapping.shadow().sql().deleteTenant(), mapping.shadow().sql().deleteAll());
                }
                return null;
            });
        } catch (SQLException e) {
            LOG.warn("Shard {} could not empty its shadow tables after the swap ({}); the next rebuild empties them",
                    shard, e.toString());
        }
    }

    /** Runs the statement for the tenant's rows on a tenant's shard, the one for every row otherwise. */
    private void execute(Connection c, String forTenant, String forAll) throws SQLException {
        boolean perTenant = partition.perTenant();
        try (PreparedStatement ps = c.prepareStatement(perTenant ? forTenant : forAll)) {
            if (perTenant) {
                ps.setString(1, partition.tenantId());
            }
            ps.executeUpdate();
        }
    }
}
