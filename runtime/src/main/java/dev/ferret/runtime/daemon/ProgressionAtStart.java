package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every progression row, read with one statement per database as a SOLO daemon starts, so that each shard's first
 * start takes its floor from here instead of a read of its own: at tens of thousands of shards those reads are
 * most of a warm start. Valid for a shard's first start only: under SOLO nothing but the shard's own agent moves its
 * row, and it has not run yet; any later start (a restart, a rebuild, a tenant released and found again) reads the
 * row, and so does a first start after something changed the row ({@link #forget}). Not used under HotCold, where another node may have run the shard until this one took it.
 *
 * <p>The rows are published once, before any shard starts; the set of shards that took theirs is concurrent, since
 * shards start on the workers.
 */
final class ProgressionAtStart {

    private static final Logger LOG = LoggerFactory.getLogger(ProgressionAtStart.class);

    private volatile Map<String, Long> rows;
    private final Set<String> taken = ConcurrentHashMap.newKeySet();

    /** Reads the rows of every database, once; a failed read leaves every shard to read its own. */
    void read(List<TenantDatabases.Database> databases, ProgressionRows progression) {
        if (rows != null) {
            return;
        }
        Map<String, Long> all = new HashMap<>();
        try {
            for (TenantDatabases.Database database : databases) {
                all.putAll(progression.every(database.dataSource()));
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Could not read the progression rows at start ({}); each shard reads its own", e.toString());
            return;
        }
        rows = Map.copyOf(all);
    }

    /**
     * {@code shard}'s row changed, or will be read elsewhere, before its first start (a rebuild, a tenant released):
     * its first start reads the row.
     */
    void forget(String shard) {
        taken.add(shard);
    }

    /** The persisted progression of {@code shard} as of the start, at its first start only (0: no row); else empty. */
    OptionalLong firstStart(String shard) {
        Map<String, Long> read = rows;
        if (read == null || !taken.add(shard)) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(read.getOrDefault(shard, 0L));
    }

    /**
     * Whether {@code row} existed as of the start, and where, at the first ask only: empty when it did not, null when
     * the rows were not read or the row was asked for before (the caller reads it).
     */
    OptionalLong firstStartIfPresent(String row) {
        Map<String, Long> read = rows;
        if (read == null || !taken.add(row)) {
            return null;
        }
        Long at = read.get(row);
        return at == null ? OptionalLong.empty() : OptionalLong.of(at);
    }
}
