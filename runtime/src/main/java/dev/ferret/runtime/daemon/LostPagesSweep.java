package dev.ferret.runtime.daemon;

import dev.ferret.runtime.context.TenantDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
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

    private final String selectEveryProgression;

    LostPagesSweep(String selectEveryProgression) {
        this.selectEveryProgression = selectEveryProgression;
    }

    /** Calls {@link ShardAgent#recheckProgression} on those of {@code agents} (all in {@code database}) that may need it. */
    void sweep(TenantDatabases.Database database, Iterable<ShardAgent> agents) {
        Map<String, Long> rows;
        try {
            rows = read(database);
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

    private Map<String, Long> read(TenantDatabases.Database database) throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(selectEveryProgression);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getLong(2));
            }
        }
        return rows;
    }
}
