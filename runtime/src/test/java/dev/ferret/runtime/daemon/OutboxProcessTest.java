package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferret.DocumentStore;
import dev.ferret.StoreOptions;
import dev.ferret.projections.OutboxMessage;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.daemon.DaemonFixtures.Tally;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The outbox across a kill: a HotCold node in another JVM halts right after a page committed, before handing its
 * messages to its dispatcher; this JVM's node takes the shard over and delivers everything left undelivered. No
 * message is lost, and a message is delivered twice only when it was in flight at the kill (published, not yet
 * marked): at most one, as a shard delivers one message at a time. On H2 both processes reach one database through
 * an H2 TCP server in this JVM.
 */
@Tag("conformance")
class OutboxProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int TICKS = 30;

    @Test
    void aNodeKilledRightAfterACommitLosesNoMessageAndTheNewOwnerDeliversTheRest() throws Exception {
        try (SharedDatabase shared = SharedDatabase.create("outbox")) {
            AtomicInteger otherOwns = new AtomicInteger(-1);
            Map<String, Long> deliveredThere = new ConcurrentHashMap<>();
            Set<String> halted = ConcurrentHashMap.newKeySet();
            Process other = startHaltingNode(shared, otherOwns, deliveredThere, halted);
            await().atMost(WAIT).until(() -> otherOwns.get() == 1);

            List<OutboxMessage> deliveredHere = Collections.synchronizedList(new ArrayList<>());
            try (DocumentStore local = Ferret.createStore(
                    OutboxNode.options(shared.url, shared.schema, deliveredHere::add))) {
                assertThat(((AsyncDaemon) local.daemon()).ownedShards()).isEmpty();
                DaemonFixtures.appendTicks(local, "p", TICKS);

                assertThat(other.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the node halted").isTrue();
                await().atMost(WAIT).until(() -> !halted.isEmpty());

                await().atMost(WAIT).until(() -> ((AsyncDaemon) local.daemon()).ownedShards().size() == 1);
                local.waitForNonStaleProjectionData(WAIT);
                assertThat(local.querySession().load(Tally.class, "p").orElseThrow().count()).isEqualTo(TICKS);
                Set<Long> all = LongStream.rangeClosed(1, TICKS).boxed().collect(Collectors.toSet());
                await().atMost(WAIT).untilAsserted(() -> {
                    Set<Long> delivered = new HashSet<>(deliveredThere.values());
                    delivered.addAll(sequences(deliveredHere));
                    assertThat(delivered).as("every message, from either node").isEqualTo(all);
                });
                // the page the node halted on committed its messages and never delivered them: the new owner did
                assertThat(deliveredHere).isNotEmpty();
                Set<String> twice = new HashSet<>(deliveredThere.keySet());
                twice.retainAll(ids(deliveredHere));
                assertThat(twice).as("delivered by both: only the message in flight at the kill").hasSizeLessThan(2);
                assertThat(ids(deliveredHere)).as("the new owner delivers each message once").hasSize(
                        deliveredHere.size());
            }
        }
    }

    @Test
    void aKilledNodesUndeliveredRowsOfAVersionTheSurvivorDoesNotRunAreSweptByTheSurvivor() throws Exception {
        try (SharedDatabase shared = SharedDatabase.create("outboxretired")) {
            AtomicInteger otherOwns = new AtomicInteger(-1);
            Map<String, Long> deliveredThere = new ConcurrentHashMap<>();
            Process other = startHaltingNode(shared, otherOwns, deliveredThere, ConcurrentHashMap.newKeySet());
            await().atMost(WAIT).until(() -> otherOwns.get() == 1);

            // the survivor runs only version 2: version 1's shard is nobody's once the other node is gone
            List<OutboxMessage> deliveredHere = Collections.synchronizedList(new ArrayList<>());
            StoreOptions survivor = OutboxNode.options(shared.url, shared.schema, deliveredHere::add,
                    OutboxConformanceTest.outboxed(false).withVersion(2));
            try (DocumentStore local = Ferret.createStore(survivor)) {
                DaemonFixtures.appendTicks(local, "p", TICKS);
                assertThat(other.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the node halted").isTrue();

                long committedByV1 = progressionOf(shared, "Outboxed:All");
                assertThat(committedByV1).isGreaterThanOrEqualTo(15);
                await().atMost(WAIT).untilAsserted(() -> {
                    Set<Long> delivered = new HashSet<>(deliveredThere.values());
                    delivered.addAll(sequences(deliveredHere, "Outboxed:All"));
                    assertThat(delivered).as("every message version 1 committed, from either node")
                            .containsAll(LongStream.rangeClosed(1, committedByV1).boxed().toList());
                });
                // the page the node halted on never went out there: the survivor swept it
                assertThat(sequences(deliveredHere, "Outboxed:All")).isNotEmpty();
            }
        }
    }

    /** An {@link OutboxNode} that halts at a tally of 15, reporting what it owns, delivers and when it halts. */
    private static Process startHaltingNode(SharedDatabase shared, AtomicInteger owns, Map<String, Long> delivered,
                                            Set<String> halted) throws Exception {
        return shared.startNode(OutboxNode.class, line -> {
            if (line.startsWith("OWNS ")) {
                owns.set(Integer.parseInt(line.substring(5).trim()));
            } else if (line.startsWith("DELIVERED ")) {
                String[] parts = line.split(" ");
                delivered.put(parts[1], Long.parseLong(parts[2]));
            } else if (line.equals("HALT")) {
                halted.add(line);
            }
        }, "15");
    }

    private static long progressionOf(SharedDatabase shared, String shard) throws Exception {
        try (Connection c = DriverManager.getConnection(shared.url);
             PreparedStatement ps = c.prepareStatement("SELECT last_seq_id FROM " + shared.schema
                     + ".pc_event_progression WHERE name = ?")) {
            ps.setString(1, shard);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    private static Set<Long> sequences(List<OutboxMessage> messages, String shard) {
        synchronized (messages) {
            return messages.stream().filter(m -> m.shard().equals(shard))
                    .map(m -> ((OutboxConformanceTest.Effect) m.payload()).sequence()).collect(Collectors.toSet());
        }
    }

    private static Set<Long> sequences(List<OutboxMessage> messages) {
        synchronized (messages) {
            return messages.stream().map(m -> ((OutboxConformanceTest.Effect) m.payload()).sequence())
                    .collect(Collectors.toSet());
        }
    }

    private static Set<String> ids(List<OutboxMessage> messages) {
        synchronized (messages) {
            return messages.stream().map(OutboxMessage::id).collect(Collectors.toSet());
        }
    }
}
