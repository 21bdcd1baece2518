package dev.ferret.runtime.daemon.hwm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.DocumentSession;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.daemon.DaemonFixtures.Tick;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.Clock;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A tenant's mark read through its cell follows the reads, whether the cell was made before or after them. */
@Tag("conformance")
class TenantMarksTest {

    private static void append(FerretDocumentStore store, String tenant, int events) {
        try (DocumentSession session = store.openSession(tenant)) {
            for (int i = 0; i < events; i++) {
                session.events().append("s", new Tick(i));
            }
            session.saveChanges();
        }
    }

    @Test
    void aCellMadeBeforeOrAfterAReadHoldsTheTenantsMarkAsOfTheLastRead() throws Exception {
        try (TestDatabase db = TestDatabase.create("tmarks")) {
            StoreOptions options = db.options();
            options.events().register(Tick.class).partitionByTenant(true);
            try (FerretDocumentStore store = (FerretDocumentStore) Ferret.createStore(options)) {
                TenantMarks marks = new TenantMarks("default", store.dataSource(),
                        store.dialect().daemonSql(store.names()), Clock.systemUTC());
                LongSupplier early = marks.cellOf("a");
                assertThat(early.getAsLong()).as("not read yet").isZero();
                append(store, "a", 3);
                append(store, "b", 2);
                assertThat(early.getAsLong()).as("appended, not read").isZero();

                marks.refresh();
                assertThat(early.getAsLong()).isEqualTo(3);
                LongSupplier late = marks.cellOf("b");
                assertThat(late.getAsLong()).as("made after the read").isEqualTo(2);

                append(store, "b", 4);
                marks.refresh();
                assertThat(late.getAsLong()).isEqualTo(6);
                assertThat(marks.cellOf("b").getAsLong()).isEqualTo(6).isEqualTo(marks.markOf("b"));
                assertThat(early.getAsLong()).as("a did not move").isEqualTo(3);
            }
        }
    }
}
