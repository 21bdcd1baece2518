package dev.ferret.runtime;

import dev.ferret.DocumentQuery;
import dev.ferret.StoreOptions;
import dev.ferret.runtime.documents.DocumentMapping;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Equality filters on top-level JSON properties, combined with AND. */
final class FerretDocumentQuery<T> implements DocumentQuery<T> {

    private final FerretQuerySession session;
    private final DocumentMapping<T> mapping;
    private final List<String> properties = new ArrayList<>();
    private final List<String> values = new ArrayList<>();

    FerretDocumentQuery(FerretQuerySession session, DocumentMapping<T> mapping) {
        this.session = session;
        this.mapping = mapping;
    }

    @Override
    public DocumentQuery<T> where(String property, Object value) {
        try {
            StoreOptions.requireIdentifier("query property", property);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (value == null) {
            throw new IllegalArgumentException("value of query property '" + property + "' must not be null");
        }
        properties.add(session.context.dialect().propertyArgument(property));
        values.add(value.toString());
        return this;
    }

    @Override
    public DocumentQuery<T> queryForNonStaleData(Duration timeout) {
        session.store.waitForNonStale(mapping.type(), session.tenantId, timeout);
        return this;
    }

    @Override
    public List<T> toList() {
        session.ensureOpen();
        try (Connection c = session.context.dataSourceOf(session.tenantId).getConnection();
             PreparedStatement ps = c.prepareStatement(withFilters(mapping.sql().selectAll()) + " ORDER BY id")) {
            bind(ps);
            return session.readDocuments(ps, mapping.type());
        } catch (SQLException e) {
            throw session.failure("querying " + mapping.type().getSimpleName(), e);
        }
    }

    @Override
    public long count() {
        session.ensureOpen();
        try (Connection c = session.context.dataSourceOf(session.tenantId).getConnection();
             PreparedStatement ps = c.prepareStatement(withFilters(mapping.sql().countAll()))) {
            bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw session.failure("counting " + mapping.type().getSimpleName(), e);
        }
    }

    private String withFilters(String base) {
        StringBuilder sql = new StringBuilder(base);
        for (int i = 0; i < properties.size(); i++) {
            sql.append(" AND ").append(mapping.propertyEquals());
        }
        return sql.toString();
    }

    private void bind(PreparedStatement ps) throws SQLException {
        ps.setString(1, session.tenantId);
        int index = 2;
        for (int i = 0; i < properties.size(); i++) {
            ps.setString(index++, properties.get(i));
            ps.setString(index++, values.get(i));
        }
    }
}
