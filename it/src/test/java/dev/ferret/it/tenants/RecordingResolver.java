package dev.ferret.it.tenants;

import dev.ferret.TenantResolver;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** The application's tenant resolver: every tenant in the store's own database, and each question recorded. */
@ApplicationScoped
public class RecordingResolver implements TenantResolver {

    private final List<String> asked = new CopyOnWriteArrayList<>();

    @Override
    public Optional<String> databaseOf(String tenantId) {
        asked.add(tenantId);
        return Optional.empty();
    }

    public List<String> asked() {
        return List.copyOf(asked);
    }
}
