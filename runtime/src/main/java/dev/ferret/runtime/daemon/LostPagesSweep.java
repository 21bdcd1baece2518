package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.progression.ProgressionRows;
import java.sql.SQLException;
import java.util.Map;

/**
 * After the detector reads a database it could not read before, which of the database's shards may have lost
 * committed pages ({@link LostPages}): one read of every progression row there picks those whose row lies behind the
 * floor they hold, instead of a read by each shard. A picked shard reads its own row before its next page (one whose
 * floor moved on after this read is picked too, and finds nothing). If the read fails every shard is picked.
 *
 * <p>Stateless; runs on the scheduler thread.
 */
final class LostPagesSweep {

    private final ProgressionRows progression;

    LostPagesSweep(ProgressionRows progression) {
        this.progression = progression;
    }

    /** Calls {@link ShardAgent#recheckProgression} on those of {@code agents} (all in {@code database}) that may need it. */
    void sweep(TenantDatabases.Database database, Iterable<ShardAgent> agents) {
        Map<String, Long> rows;
        try {
            rows = progression.every(database.dataSource());
        } catch (SQLException | RuntimeException e) {
            agents.forEach(ShardAgent::recheckProgression);
            return;
        }
        for (ShardAgent agent : agents) {
            if (agent.floor() > rows.getOrDefault(agent.name(), 0L)) {
                agent.recheckProgression();
            }
        }
    }
}
