package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.StoreOptions;
import dev.ferret.runtime.Ferret;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.context.TenantDatabases;
import dev.ferret.runtime.progression.ProgressionRows;
import dev.ferret.runtime.testing.FlakyDataSource;
import dev.ferret.runtime.testing.TestDatabase;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The rows read at a SOLO start serve each shard's first start once; absent rows are 0; a failed read serves none. */
@Tag("conformance")
class ProgressionAtStartTest {

    @Test
    void eachShardTakesItsRowOnceAndLaterStartsAndUnreadRowsFallBackToTheirOwnRead() throws Exception {
        try (TestDatabase db = TestDatabase.create("startrows");
             FerretDocumentStore store = (FerretDocumentStore) Ferret.createStore(db.options())) {
            var sql = store.dialect().daemonSql(store.names());
            try (var c = db.dataSource().getConnection(); var ps = c.prepareStatement(sql.raiseMark())) {
                ps.setString(1, "Orders:All@t1");
                ps.setLong(2, 42);
                ps.setObject(3, OffsetDateTime.now());
                ps.executeUpdate();
            }
            TenantDatabases.Database main = new TenantDatabases.Database(StoreOptions.DEFAULT_DATABASE,
                    db.dataSource());
            ProgressionAtStart rows = new ProgressionAtStart();
            assertThat(rows.firstStart("Orders:All@t1")).as("not read yet").isEmpty();

            ProgressionRows progression = new ProgressionRows(store.dialect(), sql);
            rows.read(List.of(main), progression);
            assertThat(rows.firstStart("Orders:All@t1")).hasValue(42);
            assertThat(rows.firstStart("Orders:All@t1")).as("a second start reads its row").isEmpty();
            assertThat(rows.firstStart("Orders:All@t2")).as("no row: nothing committed").hasValue(0);
            rows.forget("Orders:All@t3");
            assertThat(rows.firstStart("Orders:All@t3")).as("rebuilt or released before its first start").isEmpty();

            FlakyDataSource unreachable = new FlakyDataSource(db.dataSource());
            unreachable.down(true);
            ProgressionAtStart failed = new ProgressionAtStart();
            failed.read(List.of(new TenantDatabases.Database(StoreOptions.DEFAULT_DATABASE, unreachable)),
                    progression);
            assertThat(failed.firstStart("Orders:All@t1")).isEmpty();
        }
    }
}
