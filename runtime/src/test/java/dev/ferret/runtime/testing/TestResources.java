package dev.ferret.runtime.testing;

import java.util.ArrayList;
import java.util.List;

/** What a test opened (databases, stores, connections), closed in reverse order by the test's {@code @AfterEach}. */
public final class TestResources implements AutoCloseable {

    private final List<AutoCloseable> opened = new ArrayList<>();

    public <T extends AutoCloseable> T add(T resource) {
        opened.add(resource);
        return resource;
    }

    /** A fresh database on the configured engine, dropped when the test ends. */
    public TestDatabase database(String label) {
        return add(TestDatabase.create(label));
    }

    @Override
    public void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        opened.clear();
    }
}
