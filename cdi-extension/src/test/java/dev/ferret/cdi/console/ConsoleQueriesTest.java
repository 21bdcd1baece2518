package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferret.daemon.ShardQuery;
import dev.ferret.daemon.ShardState;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The console's shard filters and page, read from request parameters. */
class ConsoleQueriesTest {

    private static ShardQuery read(Map<String, String> parameters) {
        return ConsoleQueries.shardQuery(parameters::get);
    }

    @Test
    void noParametersIsTheFirstPageOfEveryShard() {
        ShardQuery query = read(Map.of());
        assertThat(query.offset()).isZero();
        assertThat(query.limit()).isEqualTo(ConsoleQueries.DEFAULT_LIMIT);
        assertThat(query.projection()).isNull();
        assertThat(query.states()).isEmpty();
    }

    @Test
    void everyFilterAndThePageAreRead() {
        ShardQuery query = read(Map.of("projection", "Orders", "tenant", " t1 ", "database", "far",
                "state", "paused, held", "offset", "200", "limit", "50"));
        assertThat(query.projection()).isEqualTo("Orders");
        assertThat(query.tenantId()).isEqualTo("t1");
        assertThat(query.database()).isEqualTo("far");
        assertThat(query.states()).containsExactlyInAnyOrder(ShardState.PAUSED, ShardState.HELD);
        assertThat(query.offset()).isEqualTo(200);
        assertThat(query.limit()).isEqualTo(50);
        assertThat(read(Map.of("projection", " ", "state", "")).projection()).isNull();
    }

    @Test
    void aParameterThatCannotBeReadIsRefusedNamingItAndItsValue() {
        assertThatThrownBy(() -> read(Map.of("state", "SLEEPING")))
                .hasMessageContaining("state").hasMessageContaining("SLEEPING").hasMessageContaining("RUNNING");
        assertThatThrownBy(() -> read(Map.of("offset", "ten"))).hasMessageContaining("offset")
                .hasMessageContaining("'ten'");
        assertThatThrownBy(() -> read(Map.of("limit", "0"))).hasMessageContaining("limit")
                .hasMessageContaining("was 0");
        assertThatThrownBy(() -> read(Map.of("limit", "1000000"))).hasMessageContaining("limit");
    }
}
