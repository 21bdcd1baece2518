package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferret.StoreOptions;
import dev.ferret.daemon.DaemonSettings;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.context.TimeSource;
import dev.ferret.runtime.context.TransactionRunner;
import dev.ferret.runtime.daemon.SharedWrites.Outcome;
import dev.ferret.runtime.daemon.SharedWrites.Verdict;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The grouping of pages into shared transactions, over a transaction runner that records what it committed and
 * rolled back: who leads, who is taken, and what each member is told.
 */
class SharedWritesTest {

    private static final TenantDatabases.Database MAIN = new TenantDatabases.Database("main", null);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final RecordingRunner runner = new RecordingRunner();
    private final SharedWrites writes = SharedWrites.of(runner, limits(), true, true, 1);

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    private static DatabaseLimits limits() {
        return new DatabaseLimits(new TenantDatabases(null, new StoreOptions().tenancy(), true), new DaemonSettings(),
                TimeSource.SYSTEM);
    }

    /** Commits when the work returns, unless told to fail the commit; records every write of a committed group. */
    private static final class RecordingRunner implements TransactionRunner {
        final List<String> committed = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger rolledBack = new AtomicInteger();
        volatile boolean failCommit;
        /** The writes of the transaction running; only the leader's thread touches it. */
        private List<String> pending;

        @Override
        public <T> T inTransaction(DataSource dataSource, Work<T> work) throws SQLException {
            pending = new ArrayList<>();
            T result;
            try {
                result = work.run(null);
            } catch (SQLException | RuntimeException e) {
                rolledBack.incrementAndGet();
                throw e;
            }
            if (failCommit) {
                throw new SQLException("test fault: the commit's reply was lost", "08006");
            }
            committed.addAll(pending);
            return result;
        }

        void write(String what) {
            pending.add(what);
        }
    }

    /** A page that writes its name, optionally fails, waits for a latch, or is cancelled. */
    private final class Page implements SharedWrites.Member {
        final String name;
        volatile boolean fails;
        volatile boolean cancelled;
        volatile boolean cancelAfterWrite;
        volatile CountDownLatch writing;
        volatile CountDownLatch release;

        Page(String name) {
            this.name = name;
        }

        @Override
        public void write(Connection connection) throws SQLException {
            if (writing != null) {
                writing.countDown();
                awaitOpen(release);
            }
            if (fails) {
                throw new SQLException("test fault: page " + name + " cannot write", "23000");
            }
            runner.write(name);
            if (cancelAfterWrite) {
                cancelled = true;
            }
        }

        @Override
        public boolean cancelled() {
            return cancelled;
        }
    }

    private static void awaitOpen(CountDownLatch latch) {
        try {
            assertThat(latch.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private Future<Outcome> submit(Page page) {
        return threads.submit(() -> writes.write(MAIN, page));
    }

    /** Starts a leader that holds its group open until {@code release} opens; returns once it is writing. */
    private Future<Outcome> holdingLeader(Page leader, CountDownLatch release) {
        leader.writing = new CountDownLatch(1);
        leader.release = release;
        Future<Outcome> outcome = submit(leader);
        awaitOpen(leader.writing);
        return outcome;
    }

    private List<Future<Outcome>> queue(Page... pages) {
        List<Future<Outcome>> outcomes = new ArrayList<>();
        for (Page page : pages) {
            outcomes.add(submit(page));
        }
        await().atMost(WAIT).until(() -> writes.queued(MAIN.name()) == pages.length);
        return outcomes;
    }

    private static Outcome get(Future<Outcome> future) throws Exception {
        return future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void thePagesQueuedWhileAGroupRunsCommitTogetherInTheNextOne() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("a"), release);
        List<Future<Outcome>> queued = queue(new Page("b"), new Page("c"), new Page("d"));
        release.countDown();

        assertThat(get(first).verdict()).isEqualTo(Verdict.COMMITTED);
        for (Future<Outcome> outcome : queued) {
            assertThat(get(outcome).verdict()).isEqualTo(Verdict.COMMITTED);
        }
        assertThat(runner.committed).containsExactlyInAnyOrder("a", "b", "c", "d");
        assertThat(writes.groups()).as("the leader's group, then one group of the three queued").isEqualTo(2);
        assertThat(writes.grouped()).isEqualTo(4);
    }

    @Test
    void aPageThatFailsRollsItsGroupBackAndEveryMemberWritesAlone() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("a"), release);
        Page failing = new Page("b");
        failing.fails = true;
        List<Future<Outcome>> queued = queue(new Page("c"), failing, new Page("d"));
        release.countDown();

        assertThat(get(first).verdict()).isEqualTo(Verdict.COMMITTED);
        for (Future<Outcome> outcome : queued) {
            Outcome told = get(outcome);
            assertThat(told.verdict()).isEqualTo(Verdict.ALONE);
            assertThat(told.cause()).hasMessageContaining("page b cannot write");
        }
        assertThat(runner.committed).as("nothing of the failed group committed").containsExactly("a");
        assertThat(runner.rolledBack.get()).isEqualTo(1);
        assertThat(writes.groups()).isEqualTo(1);
    }

    @Test
    void aPageCancelledBeforeItsGroupBeginsIsNotWrittenAndTheOthersCommit() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("a"), release);
        Page cancelled = new Page("b");
        List<Future<Outcome>> queued = queue(cancelled, new Page("c"));
        cancelled.cancelled = true;
        release.countDown();

        assertThat(get(first).verdict()).isEqualTo(Verdict.COMMITTED);
        assertThat(get(queued.get(0)).verdict()).isEqualTo(Verdict.CANCELLED);
        assertThat(get(queued.get(1)).verdict()).isEqualTo(Verdict.COMMITTED);
        assertThat(runner.committed).containsExactlyInAnyOrder("a", "c");
    }

    @Test
    void aPageCancelledWhileItsGroupWritesRollsTheGroupBack() throws Exception {
        Page cancelling = new Page("a");
        cancelling.cancelAfterWrite = true;
        Page other = new Page("b");
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("lead"), release);
        List<Future<Outcome>> queued = queue(cancelling, other);
        release.countDown();

        assertThat(get(first).verdict()).isEqualTo(Verdict.COMMITTED);
        assertThat(get(queued.get(0)).verdict()).isEqualTo(Verdict.ALONE);
        assertThat(get(queued.get(1)).verdict()).isEqualTo(Verdict.ALONE);
        assertThat(runner.committed).containsExactly("lead");
    }

    @Test
    void aCommitThatFailsAfterTheWritesLeavesEveryMembersOutcomeUnknown() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("a"), release);
        List<Future<Outcome>> queued = queue(new Page("b"), new Page("c"));
        runner.failCommit = true;
        release.countDown();

        assertThat(get(first).verdict()).as("the leader's commit failed too").isEqualTo(Verdict.UNKNOWN);
        for (Future<Outcome> outcome : queued) {
            Outcome told = get(outcome);
            assertThat(told.verdict()).isEqualTo(Verdict.UNKNOWN);
            assertThat(told.cause()).hasMessageContaining("reply was lost");
        }
        assertThat(writes.groups()).isZero();
    }

    @Test
    void aPageInterruptedWhileQueuedLeavesTheQueueAndKeepsItsInterrupt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome> first = holdingLeader(new Page("a"), release);
        AtomicBoolean interruptKept = new AtomicBoolean();
        Page interrupted = new Page("b");
        Future<?> queued = threads.submit(() -> {
            try {
                writes.write(MAIN, interrupted);
            } catch (SQLException e) {
                interruptKept.set(Thread.currentThread().isInterrupted());
                return e;
            }
            return null;
        });
        await().atMost(WAIT).until(() -> writes.queued(MAIN.name()) == 1);
        queued.cancel(true);
        await().atMost(WAIT).until(() -> writes.queued(MAIN.name()) == 0);
        release.countDown();

        assertThat(get(first).verdict()).isEqualTo(Verdict.COMMITTED);
        await().atMost(WAIT).untilTrue(interruptKept);
        assertThat(runner.committed).containsExactly("a");
    }

    @Test
    void aPageAloneInItsQueueIsWrittenAtOnceByItsOwnThread() throws Exception {
        assertThat(writes.write(MAIN, new Page("a")).verdict()).isEqualTo(Verdict.COMMITTED);
        assertThat(runner.committed).containsExactly("a");
    }

    @Test
    void offWhenNotAllowedOrWhenADatabaseHoldsOneShard() {
        assertThat(SharedWrites.of(runner, limits(), false, true, 22).enabled()).isFalse();
        assertThat(SharedWrites.of(runner, limits(), true, false, 1).enabled()).isFalse();
        assertThat(SharedWrites.of(runner, limits(), true, false, 2).enabled()).isTrue();
        assertThat(SharedWrites.of(runner, limits(), true, true, 1).enabled()).isTrue();
    }

    @Test
    void aFailingWriteIsNeverThrownToTheMembers() {
        Page failing = new Page("a");
        failing.fails = true;
        assertThatThrownBy(() -> {
            Outcome outcome = writes.write(MAIN, failing);
            if (outcome.verdict() == Verdict.ALONE) {
                throw outcome.cause();
            }
        }).hasMessageContaining("page a cannot write");
        assertThat(runner.committed).isEmpty();
    }
}
