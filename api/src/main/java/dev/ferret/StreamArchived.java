package dev.ferret;

/**
 * The event Ferret appends to a stream when {@link EventOperations#archiveStream} moves the stream's earlier events
 * to the archive. It stays live, so the async projections see it: a snapshot projection that should drop the
 * stream's document says {@code deleteOn(StreamArchived.class)}, one that keeps it needs do nothing. Stored under the
 * alias {@value #ALIAS}.
 *
 * @param streamId the stream archived
 */
public record StreamArchived(String streamId) {

    public static final String ALIAS = "stream_archived";
}
