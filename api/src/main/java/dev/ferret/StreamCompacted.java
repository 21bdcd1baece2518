package dev.ferret;

/**
 * The event that replaces a stream's events up to {@code throughVersion} when
 * {@link EventOperations#compactStream} compacts it: the state the snapshot projection {@code projection} had folded
 * from them, as JSON ({@code null} when they deleted the aggregate). It takes the version and the sequence number of
 * the last event it replaces, so versions keep their meaning; live aggregation, {@code fetchForWriting} and that
 * projection's rebuilds start from it, and other projections ignore it. Stored under the alias {@value #ALIAS}.
 *
 * @param projection     the snapshot projection whose fold the state is
 * @param throughVersion the last version it replaces
 * @param state          the folded document as JSON, or null
 */
public record StreamCompacted(String projection, long throughVersion, String state) {

    public static final String ALIAS = "stream_compacted";
}
