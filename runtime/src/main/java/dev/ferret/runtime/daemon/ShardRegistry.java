package dev.ferret.runtime.daemon;

import dev.ferret.runtime.projections.ProjectionApplier;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Every shard agent of the daemon by name, and the lookups the operator's verbs, the rebuild and the waits share.
 * Two concurrent maps of the same agents: one hashed, for a lookup by name in constant time, one ordered by name, for
 * status pages that stay stable. {@link #add} (the daemon's constructor, or the scheduler thread when a new tenant
 * shows up) costs what it adds, never a copy of what is there; agents, status and waiters read without locks, and a
 * reader may see an agent in one map a moment before the other.
 */
final class ShardRegistry {

    private final List<ProjectionApplier> appliers;
    private final ConcurrentMap<String, ShardAgent> shards = new ConcurrentHashMap<>();
    private final ConcurrentNavigableMap<String, ShardAgent> byName = new ConcurrentSkipListMap<>();

    ShardRegistry(List<ProjectionApplier> appliers) {
        this.appliers = List.copyOf(appliers);
    }

    /** Adds agents; the caller starts them or hands them to the HotCold ownership. */
    void add(List<ShardAgent> agents) {
        agents.forEach(agent -> {
            byName.put(agent.name(), agent);
            shards.put(agent.name(), agent);
            agent.slot().registered();
        });
    }

    /** Takes agents out (a tenant released): lookups no longer find them. */
    void remove(List<ShardAgent> agents) {
        agents.forEach(agent -> {
            shards.remove(agent.name(), agent);
            byName.remove(agent.name(), agent);
            agent.slot().unregistered();
        });
    }

    Collection<ShardAgent> all() {
        return byName.values();
    }

    /** Every agent in no particular order: the cheapest pass, for counting. */
    Collection<ShardAgent> inAnyOrder() {
        return shards.values();
    }

    /** Every agent ordered by name. */
    Collection<ShardAgent> byName() {
        return byName.values();
    }

    Set<String> names() {
        return Collections.unmodifiableSet(byName.keySet());
    }

    int size() {
        return shards.size();
    }

    boolean contains(String name) {
        return shards.containsKey(name);
    }

    ShardAgent get(String name) {
        return shards.get(name);
    }

    /**
     * The shard named {@code name}, or the one shard of the projection named {@code name}.
     *
     * @throws IllegalArgumentException naming the known shards when there is no such shard, or several
     */
    ShardAgent agentFor(String name) {
        ShardAgent agent = shards.get(name);
        if (agent == null) {
            List<ShardAgent> named = agentsNamed(name);
            if (named.size() != 1) {
                throw new IllegalArgumentException("no async shard named '" + name + "'" + (named.isEmpty() ? ""
                        : " (projection '" + name + "' has one shard per tenant)") + "; known shards: "
                        + known());
            }
            agent = named.get(0);
        }
        return agent;
    }

    /**
     * The shard named {@code name}, or every shard of the projection named {@code name} (none while a
     * tenant-partitioned store has seen no tenant).
     *
     * @throws IllegalArgumentException when neither a shard nor a projection has that name
     */
    List<ShardAgent> agentsNamed(String name) {
        Map<String, ShardAgent> current = byName;
        ShardAgent exact = shards.get(name);
        if (exact != null) {
            return List.of(exact);
        }
        List<ShardAgent> agents = current.values().stream().filter(a -> a.applier().name().equals(name)).toList();
        if (agents.isEmpty() && appliers.stream().noneMatch(a -> a.name().equals(name))) {
            throw new IllegalArgumentException("no async projection or shard named '" + name + "'; known shards: "
                    + known());
        }
        return agents;
    }

    /** The first shard names, for an error message that stays short at any number of shards. */
    String known() {
        List<String> first = byName.keySet().stream().limit(20).toList();
        int all = byName.size();
        return all > first.size() ? first + " and " + (all - first.size()) + " more" : first.toString();
    }

    /**
     * Whether {@code shard} belongs to no projection of this store any more (a version replaced by a later one):
     * its outbox rows have no owner but the sweep. A tenant's shard is judged by its projection's part.
     */
    boolean retired(String shard) {
        int tenantAt = shard.indexOf('@');
        String projectionShard = tenantAt < 0 ? shard : shard.substring(0, tenantAt);
        for (ProjectionApplier applier : appliers) {
            if (ShardNames.base(applier.name(), applier.version()).equals(projectionShard)) {
                return false;
            }
        }
        return true;
    }
}
