package dev.ferret.it.app;

import dev.ferret.EventEnvelope;
import dev.ferret.cdi.AsyncProjection;
import dev.ferret.projections.DocumentOperations;
import dev.ferret.projections.EventProjection;
import jakarta.enterprise.context.Dependent;

/**
 * The only projection that handles {@link ItEvents.Noted}; it declares the type on its annotation, so a restarted
 * application reads those events back before it appends one itself.
 */
@Dependent
@AsyncProjection(events = ItEvents.Noted.class)
public class ItNotes extends EventProjection {

    public ItNotes() {
        super("Notes", ItNote.class);
    }

    @Override
    public void apply(EventEnvelope event, DocumentOperations operations) {
        if (event.data() instanceof ItEvents.Noted noted) {
            operations.store(new ItNote(noted.noteId(), noted.text()));
        }
    }
}
