package dev.ferret.runtime.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.DatabaseException;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.conformance.Fixtures.Customer;
import dev.ferret.runtime.conformance.Fixtures.OrderPlaced;
import dev.ferret.runtime.dialect.SequencesPassedException;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import dev.ferret.runtime.testing.TestResources;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a caller retries: a failed save says through {@link DatabaseException#isTransient()} whether the same unit of
 * work may succeed when run again, without the caller knowing the engine's error codes or Ferret's own types.
 */
@Tag("conformance")
class TransientFailuresConformanceTest {

    private final TestResources resources = new TestResources();

    @AfterEach
    void close() throws Exception {
        resources.close();
    }

    @Test
    void anOutageIsTransientTheSameUnitOfWorkSavesOnceTheDatabaseIsBackAndNothingWasWrittenBefore() {
        TestDatabase db = resources.database("transient");
        FlakyDataSource flaky = new FlakyDataSource(db.dataSource());
        DocumentStore store = resources.add(Ferret.createStore(db.options().dataSource(flaky).documents()
                .register(Customer.class).uniqueIndex(Customer.class, "name").and().events()
                .register(OrderPlaced.class).and()));
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer("c1", "Ann", "Active", 1, false));
            session.events().append("orders-1", new OrderPlaced("o1", "c1", 1));
            flaky.down(true);
            assertThatThrownBy(session::saveChanges).isInstanceOf(DatabaseException.class)
                    .satisfies(e -> assertThat(((DatabaseException) e).isTransient()).isTrue());
            flaky.down(false);
            assertThat(store.querySession().load(Customer.class, "c1")).isEmpty();
            // the buffers are kept after a failed save: the retry is the same call
            session.saveChanges();
        }
        assertThat(store.querySession().load(Customer.class, "c1")).isPresent();
        assertThat(store.querySession().fetchStream("orders-1")).hasSize(1);

        // a refused value is not transient: running it again fails again
        try (DocumentSession session = store.openSession()) {
            session.store(new Customer("c2", "Ann", "Active", 1, false));
            assertThatThrownBy(session::saveChanges).isInstanceOf(FerretException.class)
                    .satisfies(e -> assertThat(e instanceof DatabaseException database && database.isTransient())
                            .as("a unique index refusal is not transient").isFalse());
        }
    }

    @Test
    void anAppendWhoseNumbersTheMarkPassedIsTransient() {
        DatabaseException wrapped = new DatabaseException("saving changes failed",
                new SequencesPassedException(7, 9));
        assertThat(wrapped.isTransient()).isTrue();
    }
}
