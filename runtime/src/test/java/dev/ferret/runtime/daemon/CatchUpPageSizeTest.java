package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.DaemonSettings;
import org.junit.jupiter.api.Test;

class CatchUpPageSizeTest {

    @Test
    void fullPagesDoubleTheNextUpToTheGrowthCap() {
        CatchUpPageSize size = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(5), unbounded());
        assertThat(size.next()).isEqualTo(100);
        size.committed(100, 100);
        assertThat(size.next()).isEqualTo(200);
        size.committed(200, 200);
        size.committed(400, 400);
        assertThat(size.next()).isEqualTo(500);
        size.committed(500, 500);
        assertThat(size.next()).isEqualTo(500);
    }

    @Test
    void aPageThatIsNotFullOrThatFailedGoesBackToTheBatchSize() {
        CatchUpPageSize size = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(8), unbounded());
        size.committed(100, 100);
        size.committed(200, 199);
        assertThat(size.next()).isEqualTo(100);
        size.committed(100, 100);
        size.reset();
        assertThat(size.next()).isEqualTo(100);
    }

    @Test
    void growthOneKeepsEveryPageAtTheBatchSize() {
        CatchUpPageSize size = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(1), unbounded());
        size.committed(100, 100);
        assertThat(size.next()).isEqualTo(100);
    }

    @Test
    void neverPastOneHundredThousandEventsNorAQuarterOfABoundedBudget() {
        CatchUpPageSize huge = new CatchUpPageSize(new DaemonSettings().batchSize(60_000).maxBatchGrowth(4),
                unbounded());
        assertThat(huge.most()).isEqualTo(CatchUpPageSize.MOST_EVENTS);
        CatchUpPageSize budgeted = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(50),
                new LoadBudget(2_000, MemorySignal.NONE));
        assertThat(budgeted.most()).isEqualTo(500);
        CatchUpPageSize tight = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(50),
                new LoadBudget(200, MemorySignal.NONE));
        assertThat(tight.most()).as("never below the batch size").isEqualTo(100);
    }

    @Test
    void aReplayLoadsItsWholePageFromTheFirstAndKeepsItWithinTheSameBounds() {
        CatchUpPageSize size = new CatchUpPageSize(new DaemonSettings().batchSize(100).maxBatchGrowth(5)
                .rebuildBatchGrowth(40), unbounded());
        size.reset();
        size.replaying();
        assertThat(size.next()).isEqualTo(4_000);
        size.replaying();
        assertThat(size.next()).as("a replay's page that was not full keeps the size").isEqualTo(4_000);
        size.reset();
        assertThat(size.next()).as("a failed page goes back to the batch size").isEqualTo(100);

        CatchUpPageSize huge = new CatchUpPageSize(new DaemonSettings().batchSize(60_000).rebuildBatchGrowth(4),
                unbounded());
        huge.replaying();
        assertThat(huge.next()).isEqualTo(CatchUpPageSize.MOST_EVENTS);
        CatchUpPageSize budgeted = new CatchUpPageSize(new DaemonSettings().batchSize(100).rebuildBatchGrowth(100),
                new LoadBudget(2_000, MemorySignal.NONE));
        budgeted.replaying();
        assertThat(budgeted.next()).as("a quarter of the budget").isEqualTo(500);
    }

    private static LoadBudget unbounded() {
        return new LoadBudget(0, MemorySignal.NONE);
    }
}
