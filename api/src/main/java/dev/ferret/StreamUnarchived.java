package dev.ferret;

/**
 * The event Ferret appends to a stream when {@link EventOperations#unarchiveStream} brings its archived events back
 * into the live log. Those events keep their sequence numbers, so the daemon's shards, which passed them long ago,
 * do not apply them again; a rebuild does. Stored under the alias {@value #ALIAS}.
 *
 * @param streamId the stream brought back
 */
public record StreamUnarchived(String streamId) {

    public static final String ALIAS = "stream_unarchived";
}
