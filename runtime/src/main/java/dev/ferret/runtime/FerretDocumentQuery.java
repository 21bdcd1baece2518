package dev.ferret.runtime;

import dev.ferret.DocumentQuery;
import dev.ferret.Filter;
import dev.ferret.runtime.documents.DocumentMapping;
import dev.ferret.runtime.query.PropertyPath;
import dev.ferret.runtime.query.QuerySql;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** A query of one session over one document type; its statement is rendered by {@link QuerySql}. */
final class FerretDocumentQuery<T> implements DocumentQuery<T> {

    private final FerretQuerySession session;
    private final DocumentMapping<T> mapping;
    private final QuerySql sql;
    /** The primary's position this query must see, fixed by {@link #queryForNonStaleData}. */
    private long awaited = ReplicaReads.NOTHING_AWAITED;

    FerretDocumentQuery(FerretQuerySession session, DocumentMapping<T> mapping) {
        this.session = session;
        this.mapping = mapping;
        this.sql = new QuerySql(session.context.dialect(), session.context.names(), mapping.sql(), mapping.type(),
                mapping::indexedExpression, mapping.checksPaths());
    }

    @Override
    public DocumentQuery<T> where(String path, Object value) {
        return where(Filter.eq(path, value));
    }

    @Override
    public DocumentQuery<T> where(Filter filter) {
        sql.where(Objects.requireNonNull(filter, "filter"));
        return this;
    }

    @Override
    public DocumentQuery<T> orderBy(String path) {
        sql.orderBy(path, false);
        return this;
    }

    @Override
    public DocumentQuery<T> orderByDescending(String path) {
        sql.orderBy(path, true);
        return this;
    }

    @Override
    public DocumentQuery<T> limit(int count) {
        sql.limit(count);
        return this;
    }

    @Override
    public DocumentQuery<T> offset(int count) {
        sql.offset(count);
        return this;
    }

    @Override
    public DocumentQuery<T> startAfter(T last) {
        Objects.requireNonNull(last, "last");
        JsonObject document;
        try (JsonReader reader = Json.createReader(new StringReader(session.context.serializer().toJson(last)))) {
            document = reader.readObject();
        }
        List<Object> values = new ArrayList<>();
        for (PropertyPath path : sql.orderPaths()) {
            values.add(valueAt(document, path));
        }
        sql.startAfter(values, mapping.idOf(last));
        return this;
    }

    /** The value at {@code path} as a number or text, or null when missing, null or not a scalar. */
    private static Object valueAt(JsonObject document, PropertyPath path) {
        JsonValue value = document;
        for (String name : path.segments()) {
            if (value.getValueType() != JsonValue.ValueType.OBJECT) {
                return null;
            }
            value = value.asJsonObject().get(name);
            if (value == null) {
                return null;
            }
        }
        return switch (value.getValueType()) {
            case NUMBER -> ((JsonNumber) value).bigDecimalValue();
            case STRING -> ((JsonString) value).getString();
            case TRUE -> "true";
            case FALSE -> "false";
            default -> null;
        };
    }

    @Override
    public DocumentQuery<T> queryForNonStaleData(Duration timeout) {
        session.store.waitForNonStale(mapping.type(), session.tenantId, timeout);
        // read now, after the wait: what the shards committed lies below it, so a replica past it shows their work
        awaited = session.awaitedNow();
        return this;
    }

    @Override
    public List<T> toList() {
        return run(sql.select());
    }

    @Override
    public long count() {
        session.ensureOpen();
        QuerySql.Rendered count = sql.count();
        try (Connection c = session.readSource(awaited).getConnection();
             PreparedStatement ps = c.prepareStatement(count.sql())) {
            count.bind(ps, session.tenantId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw session.failure("counting " + mapping.type().getSimpleName(), e);
        }
    }

    @Override
    public boolean exists() {
        return !run(sql.select(1)).isEmpty();
    }

    @Override
    public Optional<T> first() {
        return run(sql.select(1)).stream().findFirst();
    }

    @Override
    public T single() {
        List<T> found = run(sql.select(2));
        if (found.size() != 1) {
            throw new IllegalStateException("expected exactly one " + mapping.type().getSimpleName()
                    + " to match, found " + (found.isEmpty() ? "none" : "more than one"));
        }
        return found.get(0);
    }

    private List<T> run(QuerySql.Rendered query) {
        session.ensureOpen();
        try (Connection c = session.readSource(awaited).getConnection();
             PreparedStatement ps = c.prepareStatement(query.sql())) {
            query.bind(ps, session.tenantId);
            return session.readDocuments(ps, mapping.type());
        } catch (SQLException e) {
            throw session.failure("querying " + mapping.type().getSimpleName(), e);
        }
    }
}
