package dev.ferret.runtime.context;

import dev.ferret.EventEnvelope;
import dev.ferret.JsonSerializer;
import dev.ferret.projections.SideEffectPublisher;
import dev.ferret.runtime.dialect.Dialect;
import dev.ferret.runtime.dialect.EventSql;
import dev.ferret.runtime.dialect.TableNames;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.documents.DocumentMappings;
import dev.ferret.runtime.events.EventRows;
import dev.ferret.runtime.events.EventTypes;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * What a store is made of, built once before anything runs and never changed: the engine's dialect, the table
 * names and the statements rendered for them, the document mappings, the event types, the serializer, how
 * transactions run and the clock. Sessions, projection appliers and the daemon are each handed this (or the parts of
 * it they use) instead of the store, so none of them depends on the store that built them.
 *
 * @param dataSource          the store's own database
 * @param databases           which database each tenant lives in
 * @param partitionedByTenant whether each tenant has its own event sequence and its own shards
 * @param sideEffectPublisher where messages raised as projection side effects go, from the outbox after commit
 */
public record StoreContext(DataSource dataSource, Dialect dialect, TableNames names, EventSql eventSql,
                           DocumentMappings documents, EventTypes eventTypes, JsonSerializer serializer,
                           TransactionRunner transactions, Clock clock, TenantDatabases databases,
                           boolean partitionedByTenant, SideEffectPublisher sideEffectPublisher) {

    public StoreContext {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(names, "names");
        Objects.requireNonNull(eventSql, "eventSql");
        Objects.requireNonNull(documents, "documents");
        Objects.requireNonNull(eventTypes, "eventTypes");
        Objects.requireNonNull(serializer, "serializer");
        Objects.requireNonNull(transactions, "transactions");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(databases, "databases");
    }

    /** The mapping reads and sessions use for {@code type}. */
    public <T> DocumentMapping<T> mapping(Class<T> type) {
        return documents.mapping(type);
    }

    /** The mapping one version of a projection writes. */
    public <T> DocumentMapping<T> mapping(Class<T> type, int version) {
        return documents.mapping(type, version);
    }

    /** The database {@code tenantId} lives in. */
    public DataSource dataSourceOf(String tenantId) {
        return databases.of(tenantId).dataSource();
    }

    /** Reads the event on the current row (see {@link EventRows}). */
    public EventEnvelope readEvent(ResultSet rs) throws SQLException {
        return EventRows.read(rs, eventTypes, serializer);
    }
}
