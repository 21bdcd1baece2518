package dev.ferret.runtime.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferret.daemon.ShardState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The summary's columns: only registered rows are counted, a row keeps its slot for life (a removed agent's late
 * writes land on its own row), chunks hold past their first, and each row's lag is its mark cell minus its floor.
 */
class ShardColumnsTest {

    private record Row(int group, int state, long lag, String name) {
    }

    private static List<Row> rows(ShardColumns columns) {
        List<Row> rows = new ArrayList<>();
        columns.forEachRegistered((group, state, lag, names, slot) -> rows.add(new Row(group, state, lag,
                names.of(slot))));
        return rows;
    }

    @Test
    void countsRegisteredRowsOnlyWithTheirStateAndLag() {
        ShardColumns columns = new ShardColumns();
        AtomicLong mark = new AtomicLong(100);
        ShardColumns.Slot built = columns.add(0, "a:All", mark::get);
        ShardColumns.Slot added = columns.add(1, "b:All", mark::get);
        added.registered();
        added.state(ShardState.RUNNING);
        added.floor(40);
        assertThat(rows(columns)).containsExactly(new Row(1, ShardState.RUNNING.ordinal(), 60, "b:All"));

        // a floor not read yet (-1) counts as 0; a floor past the mark lags 0
        built.registered();
        mark.set(30);
        assertThat(rows(columns)).containsExactly(new Row(0, ShardState.STOPPED.ordinal(), 30, "a:All"),
                new Row(1, ShardState.RUNNING.ordinal(), 0, "b:All"));

        // removed: no longer counted, and a late write of its agent does not bring it back or touch another row
        added.unregistered();
        added.state(ShardState.PAUSED);
        assertThat(rows(columns)).containsExactly(new Row(0, ShardState.STOPPED.ordinal(), 30, "a:All"));
    }

    @Test
    void rowsPastTheFirstChunkAreCounted() {
        ShardColumns columns = new ShardColumns();
        Map<String, ShardColumns.Slot> slots = new HashMap<>();
        for (int i = 0; i < 10_000; i++) {
            ShardColumns.Slot slot = columns.add(i % 3, "s" + i, () -> 7);
            slot.registered();
            slot.floor(i % 2 == 0 ? 7 : 2);
            slots.put("s" + i, slot);
        }
        List<Row> rows = rows(columns);
        assertThat(rows).hasSize(10_000);
        assertThat(rows.stream().filter(row -> row.lag() == 5).count()).isEqualTo(5_000);
        assertThat(rows.get(9_999)).isEqualTo(new Row(9_999 % 3, ShardState.STOPPED.ordinal(), 5, "s9999"));
    }
}
