package dev.ferret.projections;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Several projections run as one async shard, in ordered stages. Each page of events is loaded once for all
 * members; the members of a stage apply it in registration order, and a stage starts when the one before it has
 * applied the whole page, so it can load what the earlier stages wrote in that page. Every member's writes and the
 * composite's progression commit in one transaction.
 *
 * <pre>{@code
 * options.projections().add(CompositeProjection.named("orders")
 *         .stage(orderSnapshot, customerTotals)      // stage 1: reads events only
 *         .stage(new RegionReport()),                 // stage 2: loads the documents stage 1 wrote
 *     Lifecycle.ASYNC);
 * }</pre>
 *
 * <p>The composite's name and version key its shard and progression; the members' own names only appear in
 * messages, and their versions choose their document tables as they would alone. For a blue/green change, bump the
 * composite's version and the version of every member whose output changes. An event a member cannot apply is
 * taken back from every member and handled once by the shard's error policy (dead letter or pause). A composite is
 * async only, and its members are snapshots, multi-stream projections or event projections, never composites.
 */
public final class CompositeProjection extends Projection {

    private final List<List<Projection>> stages = new ArrayList<>();

    private CompositeProjection(String name) {
        super(name);
    }

    /** A composite with no stages yet; {@code name} names its shard ({@code <name>:All}). */
    public static CompositeProjection named(String name) {
        return new CompositeProjection(name);
    }

    /**
     * Adds a stage that runs after every stage added before it.
     *
     * @throws IllegalArgumentException for an empty stage, a composite member, or a member name used before
     */
    public CompositeProjection stage(Projection... members) {
        require(members, "members");
        if (members.length == 0) {
            throw new IllegalArgumentException("stage " + (stages.size() + 1) + " of composite projection '" + name()
                    + "' has no members");
        }
        List<Projection> stage = new ArrayList<>();
        for (Projection member : members) {
            require(member, "member");
            if (member instanceof CompositeProjection) {
                throw new IllegalArgumentException("composite projection '" + name() + "' cannot have the composite "
                        + member.name() + " as a member; add its stages instead");
            }
            for (Projection known : members()) {
                if (known.name().equals(member.name())) {
                    throw new IllegalArgumentException("composite projection '" + name() + "' has two members named '"
                            + member.name() + "': " + known + " and " + member);
                }
            }
            if (stage.stream().anyMatch(m -> m.name().equals(member.name()))) {
                throw new IllegalArgumentException("composite projection '" + name() + "' has two members named '"
                        + member.name() + "' in stage " + (stages.size() + 1));
            }
            stage.add(member);
        }
        stages.add(List.copyOf(stage));
        return this;
    }

    /** Sets the version (default 1); see {@link Projection#version(int)}. */
    public CompositeProjection withVersion(int version) {
        version(version);
        return this;
    }

    /** See {@link Projection#commitAlone}. */
    public CompositeProjection ownTransaction(boolean own) {
        commitAlone(own);
        return this;
    }

    /** See {@link Projection#gateSideEffects}: the gate holds back every member's side effects. */
    public CompositeProjection gateSideEffectsBehindPriorVersion(boolean gate) {
        gateSideEffects(gate);
        return this;
    }

    /** The stages in the order they run, each with its members in the order they run. */
    public List<List<Projection>> stages() {
        return List.copyOf(stages);
    }

    /** Every member, stage by stage. */
    public List<Projection> members() {
        List<Projection> all = new ArrayList<>();
        stages.forEach(all::addAll);
        return all;
    }

    @Override
    public Set<Class<?>> documentTypes() {
        Set<Class<?>> types = new LinkedHashSet<>();
        members().forEach(member -> types.addAll(member.documentTypes()));
        return Set.copyOf(types);
    }
}
