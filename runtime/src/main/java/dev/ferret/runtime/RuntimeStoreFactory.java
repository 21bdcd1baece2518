package dev.ferret.runtime;

import dev.ferret.DocumentStore;
import dev.ferret.StoreFactory;
import dev.ferret.StoreOptions;

/** The runtime behind {@link DocumentStore#create}: {@link Ferret#createStore(StoreOptions)}, found by ServiceLoader. */
public final class RuntimeStoreFactory implements StoreFactory {

    @Override
    public DocumentStore create(StoreOptions options) {
        return Ferret.createStore(options);
    }
}
