package dev.ferret.daemon;

import java.util.List;

/**
 * The documents one daemon batch wrote.
 *
 * @param shardName the shard that wrote them
 * @param tenantId  the tenant they belong to
 * @param inserted  documents that did not exist before the batch
 * @param updated   documents that existed, or that the projection stored without loading
 * @param deleted   deleted documents
 */
public record ChangeSet(String shardName, String tenantId, List<Object> inserted, List<Object> updated,
                        List<DeletedDocument> deleted) {

    /**
     * @param type the document type
     * @param id   its stored id
     */
    public record DeletedDocument(Class<?> type, String id) {
    }
}
