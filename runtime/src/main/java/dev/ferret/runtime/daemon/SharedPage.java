package dev.ferret.runtime.daemon;

import dev.ferret.EventEnvelope;
import dev.ferret.runtime.context.StoreContext;
import dev.ferret.runtime.events.StoredEvent;
import java.util.List;

/**
 * The rows of one slice of the log above a floor, as one load read them, for every shard that reads the same slice
 * from the same floor: each shard keeps the rows its projection wants. Rows below a mark never change, so a page
 * read for one shard is exact for another. Immutable but for each row's event, read at most once per row (two
 * shards reading it at once may both read it; either result is the same).
 *
 * @param from  the floor it was read above
 * @param to    the mark it was read up to
 * @param limit the most rows it asked for
 * @param rows  the rows of the log in order, wanted by some shard or not
 */
record SharedPage(long from, long to, int limit, List<Row> rows) {

    /** One row of the log and its position in the slice: the tenant's number for a tenant's page, else the store's. */
    static final class Row {

        final StoredEvent stored;
        final long position;
        /** The read event or why it cannot be read; null until a shard wanted it. */
        private volatile Object read;

        Row(StoredEvent stored, long position) {
            this.stored = stored;
            this.position = position;
        }

        /** The event, read once; throws what reading it threw, every time. */
        EventEnvelope event(StoreContext context) {
            Object known = read;
            if (known == null) {
                try {
                    known = stored.read(context.eventTypes(), context.serializer());
                } catch (RuntimeException e) {
                    known = e;
                }
                read = known;
            }
            if (known instanceof RuntimeException e) {
                throw e;
            }
            return (EventEnvelope) known;
        }
    }

    /** Whether a shard that asks for at most {@code wanted} rows above the same floor to the same mark reads this. */
    boolean serves(int wanted) {
        // a short page holds every row to the mark: any larger limit reads the same
        return wanted == limit || rows.size() < limit && rows.size() < wanted;
    }

    /** Roughly what it holds in memory, in bytes. */
    long weight() {
        long bytes = 64;
        for (Row row : rows) {
            bytes += row.stored.weight() + 32;
        }
        return bytes;
    }
}
